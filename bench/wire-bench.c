// SPDX-License-Identifier: MIT
/*
 * bench/wire-bench.c - the software NIC across processes (the wire, docs/sim-wire.md)
 * against the in-process fabric, in one run: latency and message rate of the same
 * traffic between two NICs, once as two ranks in this process on one fabric (its
 * progress thread), once as two processes whose fabrics are joined by the wire over a
 * UNIX socket (each with its progress thread; the addresses through the sockets
 * bootstrap). Rank 0 posts, rank 1's memory is the target; the same core objects (nic,
 * umem, MR, CQ, RC QPs) and posting calls (dvx/nic/post.h) on both sides.
 *
 * Rows: WRITE 8 B and fetch-add latency (post one signaled WQE, poll its CQE; median of
 * the repetitions), left to the progress threads and with the poller stepping its own
 * NIC as it polls (dvx_hal_nic_progress(), as dvx's waits do); stepped as well: WRITE 8 B
 * message rate with 64 WQEs in flight on 1 QP and on 4 QPs
 * (up to 32 requests of a QP are on the wire at once, docs/sim-wire.md); WRITE 64 KiB
 * bandwidth on 4 QPs. ratio = wire / in-process (time per operation).
 *
 * The wire's processes share a shared-memory ring per direction (1 MiB, the bootstrap's
 * default) unless --no-ring (frames through the UNIX socket); --spins N sets both
 * processes' progress threads' idle spins before they wait (dvx_sim_set_idle(); default
 * 64, the in-process fabric keeps its default). A line under the table says what the
 * measuring process's wire did (frames, kicks that woke its thread, rings).
 *
 *   wire-bench [--iters N] [--quick] [--no-ring] [--spins N] [--help]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <dvx/bootstrap/wire.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/post.h>
#include <dvx/hal/sim.h>

#define WB_SEC 1000000000ull
#define WB_QPS 4u
#define WB_DEPTH 256u
#define WB_INFLIGHT 64u
#define WB_RING (1u << 20)
#define WB_DATA (8u << 20)
#define WB_BIG (64u << 10)
#define WB_REPS 5u

struct side {
	struct dvx_nic nic;
	struct dvx_umem umem;
	struct dvx_mr mr;
	struct dvx_cq cq;
	struct dvx_qp qp[WB_QPS];
	uint8_t *rings, *data;
};

/* what a rank tells the other */
struct info {
	struct dvx_qp_conn conn[WB_QPS];
	uint64_t addr;
	uint32_t rkey;
	uint32_t rsvd;
};

static uint32_t g_iters = 20000;
static int g_no_ring;		/* --no-ring: frames through the socket */
static long g_spins = -1;	/* --spins N: the wire processes' idle spins */
static struct dvx_sim_wire_stats g_wst;	/* rank 0's wire, after the rows */
static int g_step;	/* the poller steps its NIC too (dvx_hal_nic_progress()) */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * WB_SEC + (uint64_t)ts.tv_nsec;
}

static int side_open(struct side *s, const struct dvx_hal *hal, const char *name)
{
	struct dvx_nic_cfg na = { .name = name, .gid_index = -1 };
	struct dvx_umem_cfg ua = { 0 };
	struct dvx_mr_cfg ma = { 0 };
	struct dvx_cq_cfg ca = { 0 };
	struct dvx_qp_cfg qa;
	struct dvx_mem_req wq, dbr;
	uint64_t off;
	uint32_t i;
	int err;

	memset(s, 0, sizeof(*s));
	s->rings = aligned_alloc(4096, WB_RING);
	s->data = aligned_alloc(4096, WB_DATA);
	if (!s->rings || !s->data)
		return -ENOMEM;
	memset(s->rings, 0, WB_RING);
	memset(s->data, 0, WB_DATA);
	err = dvx_nic_open(&s->nic, hal, &na);
	ua.addr = s->rings;
	ua.len = WB_RING;
	ua.dmabuf_fd = -1;
	if (!err)
		err = dvx_umem_reg(&s->nic, &ua, &s->umem);
	ma.addr = s->data;
	ma.len = WB_DATA;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_ATOMIC;
	ma.dmabuf_fd = -1;
	if (!err)
		err = dvx_mr_reg(&s->nic, &ma, &s->mr);
	ca.depth = 4 * WB_DEPTH;
	ca.ring_umem = &s->umem;
	ca.dbr_umem = &s->umem;
	ca.dbr_offset = WB_RING - 64;
	if (!err)
		err = dvx_cq_create(&s->nic, &ca, &s->cq);
	off = DVX_CQ_RING_BYTES(4 * WB_DEPTH);
	for (i = 0; i < WB_QPS && !err; i++) {
		memset(&qa, 0, sizeof(qa));
		qa.sq_depth = WB_DEPTH;
		qa.send_cq = &s->cq;
		err = dvx_qp_mem_req(&qa, &wq, &dbr);
		off = (off + wq.align - 1) / wq.align * wq.align;
		qa.wq_umem = &s->umem;
		qa.wq_offset = off;
		qa.dbr_umem = &s->umem;
		qa.dbr_offset = WB_RING - 128 - 8 * (uint64_t)i;
		off += wq.bytes;
		if (!err)
			err = dvx_qp_create(&s->nic, &qa, &s->qp[i]);
	}
	return err;
}

static void side_close(struct side *s)
{
	uint32_t i;

	for (i = 0; i < WB_QPS; i++)
		if (s->qp[i].live)
			dvx_qp_destroy(&s->qp[i]);
	dvx_cq_destroy(&s->cq);
	dvx_mr_dereg(&s->mr);
	dvx_umem_dereg(&s->umem);
	dvx_nic_close(&s->nic);
	free(s->rings);
	free(s->data);
}

static int reap(struct side *s, uint32_t n)
{
	uint64_t t0 = now_ns();
	struct dvx_wc wc;
	int r;

	while (n) {
		r = dvx_cq_poll(&s->cq, &wc);
		if (r < 0)
			return r;
		if (r) {
			n--;
			continue;
		}
		if (g_step)
			dvx_hal_nic_progress(&s->nic.hal);
		if (now_ns() - t0 > 30 * WB_SEC)
			return -ETIMEDOUT;
	}
	return 0;
}

/* one signaled WQE at a time: median ns per operation over WB_REPS runs */
static int latency(struct side *s, const struct info *peer, int fa, double *ns)
{
	double v[WB_REPS], t;
	uint32_t rep, k, n = g_iters / 4 ? g_iters / 4 : 1;
	int err;

	for (rep = 0; rep < WB_REPS; rep++) {
		uint64_t t0 = now_ns();

		for (k = 0; k < n; k++) {
			err = fa ? dvx_qp_post_fetch_add(&s->qp[0], k, peer->addr + 4096, peer->rkey,
							 1, (uintptr_t)s->data + 8192, s->mr.lkey,
							 DVX_POST_SIGNALED) :
				   dvx_qp_post_write(&s->qp[0], k, (uintptr_t)s->data, s->mr.lkey, 8,
						     peer->addr, peer->rkey, DVX_POST_SIGNALED);
			if (!err)
				err = reap(s, 1);
			if (err)
				return err;
		}
		v[rep] = (double)(now_ns() - t0) / n;
	}
	for (rep = 1; rep < WB_REPS; rep++)	/* insertion sort: the median */
		for (k = rep; k > 0 && v[k - 1] > v[k]; k--) {
			t = v[k];
			v[k] = v[k - 1];
			v[k - 1] = t;
		}
	*ns = v[WB_REPS / 2];
	return 0;
}

/* @len-byte WRITEs, WB_INFLIGHT in flight spread over @nqps QPs: ns per operation */
static int rate(struct side *s, const struct info *peer, uint32_t nqps, uint32_t len, double *ns)
{
	uint32_t n = len > 4096 ? g_iters / 16 + 1 : g_iters, posted = 0, done = 0, q = 0;
	uint64_t t0 = now_ns();
	int err;

	while (done < n) {
		while (posted < n && posted - done < WB_INFLIGHT) {
			err = dvx_qp_post_write(&s->qp[q], posted, (uintptr_t)s->data + WB_DATA / 2,
						s->mr.lkey, len, peer->addr + (uint64_t)q * WB_BIG,
						peer->rkey, DVX_POST_SIGNALED);
			if (err == -ENOSPC)
				break;
			if (err)
				return err;
			posted++;
			q = (q + 1) % nqps;
		}
		err = reap(s, 1);
		if (err)
			return err;
		done++;
	}
	*ns = (double)(now_ns() - t0) / n;
	return 0;
}

#define NROWS 6
#define NLAT 3
static const char *const row_name[NROWS] = {
	"WRITE 8 B latency", "fetch-add latency", "WRITE 8 B lat., stepped",
	"WRITE 8 B rate, 1 QP", "WRITE 8 B rate, 4 QPs", "WRITE 64 KiB, 4 QPs",
};

static int measure(struct side *s, const struct info *peer, double out[NROWS])
{
	int err = latency(s, peer, 0, &out[0]);

	if (!err)
		err = latency(s, peer, 1, &out[1]);
	/* from here the poller steps its NIC as it polls, as dvx's own waits do */
	g_step = 1;
	if (!err)
		err = latency(s, peer, 0, &out[2]);
	if (!err)
		err = rate(s, peer, 1, 8, &out[3]);
	if (!err)
		err = rate(s, peer, WB_QPS, 8, &out[4]);
	if (!err)
		err = rate(s, peer, WB_QPS, WB_BIG, &out[5]);
	g_step = 0;
	return err;
}

static struct dvx_sim_fabric *fabric(int nnics, int first, void **mem)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_sim_fabric *fab = NULL;
	size_t len;
	int i;

	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = (uint32_t)nnics;
	len = dvx_sim_fabric_mem_size(&fc);
	*mem = calloc(1, len);
	if (!*mem || dvx_sim_fabric_init(*mem, len, &fc, &fab))
		return NULL;
	for (i = 0; i < nnics; i++) {
		dvx_sim_nic_cfg_default(&nc, (unsigned)(first + i));
		if (dvx_sim_add_nic(fab, &nc) < 0)
			return NULL;
	}
	return fab;
}

/* two ranks in this process, one fabric */
static int run_local(double out[NROWS])
{
	struct dvx_sim_fabric *fab;
	struct side a, b;
	struct info peer;
	void *mem;
	uint32_t i;
	int err;

	fab = fabric(2, 0, &mem);
	if (!fab || dvx_sim_start(fab))
		return -EIO;
	err = side_open(&a, dvx_sim_hal(fab), "sim_0");
	if (!err)
		err = side_open(&b, dvx_sim_hal(fab), "sim_1");
	for (i = 0; i < WB_QPS && !err; i++)
		err = dvx_qp_connect_pair(&a.qp[i], &b.qp[i], NULL);
	peer.addr = (uintptr_t)b.data;
	peer.rkey = b.mr.rkey;
	if (!err)
		err = measure(&a, &peer, out);
	side_close(&a);
	side_close(&b);
	dvx_sim_stop(fab);
	dvx_sim_fini(fab);
	free(mem);
	return err;
}

/* one rank of two processes joined by the wire: rank 0 measures, rank 1 serves */
static int wire_rank(int rank, const char *dir, double out[NROWS])
{
	struct dvx_bootstrap_sock_cfg ba = { 0 };
	struct dvx_bootstrap_wire_cfg wa = { 0 };
	struct dvx_bootstrap bs;
	struct dvx_sim_fabric *fab;
	struct info me, all[2];
	struct side s;
	char addr[96], name[16];
	void *mem, *bsmem, *wmem;
	size_t blen = dvx_bootstrap_sock_mem_size(2, 8, 256);
	size_t wlen = dvx_bootstrap_wire_mem_size(2, WB_BIG);
	uint32_t i;
	int err;

	fab = fabric(1, rank, &mem);
	bsmem = aligned_alloc(8, (blen + 7) & ~(size_t)7);
	wmem = malloc(wlen);
	if (!fab || !bsmem || !wmem)
		return -ENOMEM;
	snprintf(addr, sizeof(addr), "unix:%s/bs", dir);
	ba.addr = addr;
	ba.rank = rank;
	ba.nranks = 2;
	ba.max_unexpected = 8;
	ba.slot_bytes = 256;
	ba.timeout_ns = 30 * WB_SEC;
	err = dvx_bootstrap_sock_init(&bs, &ba, bsmem, blen);
	if (err)
		return err;
	wa.fab = fab;
	wa.max_msg = WB_BIG;
	wa.ring_bytes = g_no_ring ? DVX_BOOTSTRAP_WIRE_NO_RING : 0;
	err = dvx_bootstrap_wire_join(&bs, &wa, wmem, wlen, 30 * WB_SEC);
	if (!err && g_spins >= 0)
		dvx_sim_set_idle(fab, (uint32_t)g_spins, 20000);
	if (!err)
		err = dvx_sim_start(fab);
	snprintf(name, sizeof(name), "sim_%d", rank);
	if (!err)
		err = side_open(&s, dvx_sim_hal(fab), name);
	memset(&me, 0, sizeof(me));
	for (i = 0; i < WB_QPS && !err; i++)
		err = dvx_qp_export(&s.qp[i], &me.conn[i]);
	me.addr = (uintptr_t)s.data;
	me.rkey = s.mr.rkey;
	if (!err)
		err = dvx_bootstrap_allgather(&bs, &me, all, sizeof(me), 30 * WB_SEC);
	for (i = 0; i < WB_QPS && !err; i++)
		err = dvx_qp_connect(&s.qp[i], &all[1 - rank].conn[i], NULL);
	if (!err)
		err = dvx_bootstrap_barrier(&bs, 30 * WB_SEC);
	if (!err && rank == 0)
		err = measure(&s, &all[1], out);
	if (!err && rank == 0)
		err = dvx_sim_wire_get_stats(fab, &g_wst);
	/* rank 1 answers until rank 0 is done */
	if (!err)
		err = dvx_bootstrap_barrier(&bs, 600 * WB_SEC);
	side_close(&s);
	dvx_sim_stop(fab);
	dvx_bootstrap_fini(&bs);
	dvx_sim_fini(fab);
	free(wmem);
	free(bsmem);
	free(mem);
	return err;
}

static int run_wire(double out[NROWS])
{
	char dir[64];
	pid_t pid;
	int st, err;

	snprintf(dir, sizeof(dir), "/tmp/dvx-wire-bench-XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(wire_rank(1, dir, NULL) ? 1 : 0);
	if (pid < 0)
		return -errno;
	err = wire_rank(0, dir, out);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		err = err ? err : -EIO;
	rmdir(dir);
	return err;
}

static void cpu_model(char *out, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(out, len, "unknown CPU");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(out, len, "%s", strchr(line, ':') + 2);
			out[strcspn(out, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
}

static void cell(char *buf, size_t n, int row, double ns)
{
	if (row < NLAT)
		snprintf(buf, n, "%.2f us", ns / 1000.0);
	else if (row < NROWS - 1)
		snprintf(buf, n, "%.3f M/s", 1000.0 / ns);
	else
		snprintf(buf, n, "%.2f GB/s", (double)WB_BIG / ns);
}

int main(int argc, char **argv)
{
	double local[NROWS], wire[NROWS];
	char cpu[128], a[32], b[32];
	int i, err;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			g_iters = 2000;
		} else if (!strcmp(argv[i], "--no-ring")) {
			g_no_ring = 1;
		} else if (!strcmp(argv[i], "--spins") && i + 1 < argc) {
			g_spins = strtol(argv[++i], NULL, 0);
			if (g_spins < 0)
				g_spins = 0;
		} else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			g_iters = (uint32_t)strtoul(argv[++i], NULL, 0);
			if (!g_iters)
				g_iters = 1;
		} else {
			fprintf(i == 1 && !strcmp(argv[i], "--help") ? stdout : stderr,
				"usage: %s [--iters N] [--quick] [--no-ring] [--spins N]\n", argv[0]);
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	err = run_local(local);
	if (err) {
		fprintf(stderr, "in-process fabric: %d\n", err);
		return 1;
	}
	err = run_wire(wire);
	if (err) {
		fprintf(stderr, "wire: %d\n", err);
		return 1;
	}
	cpu_model(cpu, sizeof(cpu));
	printf("wire-bench: the software NIC in one process vs two processes over the wire\n");
	printf("%s, %ld CPUs, %u operations per row (rates: %u in flight)\n", cpu,
	       sysconf(_SC_NPROCESSORS_ONLN), g_iters, WB_INFLIGHT);
	printf("%-24s %14s %14s %8s\n", "row", "in-process", "wire", "ratio");
	for (i = 0; i < NROWS; i++) {
		cell(a, sizeof(a), i, local[i]);
		cell(b, sizeof(b), i, wire[i]);
		printf("%-24s %14s %14s %8.2f\n", row_name[i], a, b, wire[i] / local[i]);
	}
	printf("wire (rank 0): %llu frames sent, %llu kicks woke its thread, %llu ring(s), "
	       "idle spins %ld\n", (unsigned long long)g_wst.frames_tx,
	       (unsigned long long)g_wst.kicks, (unsigned long long)g_wst.rings,
	       g_spins >= 0 ? g_spins : 64);
	return 0;
}
