// SPDX-License-Identifier: MIT
/*
 * tests/lib/p2p_world.c - ranks as threads over the software NIC (see p2p_world.h).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "p2p_world.h"

#include <dvx/bootstrap/wire.h>

void world_cfg_default(struct world_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->nranks = 2;
	c->slot_bytes = 64 << 10;
	c->nslots = 4;
	c->qps_per_nic = 1;
	c->sq_depth = 256;
	c->comp_depth = 64;
	c->progress_thread = 1;
}

void wfail(struct wrank *r, int line, int err, const char *fmt, ...)
{
	va_list ap;

	if (r->fail_line)
		return;
	r->fail_line = line;
	r->fail_err = err ? err : -1;
	va_start(ap, fmt);
	vsnprintf(r->fail_msg, sizeof(r->fail_msg), fmt, ap);
	va_end(ap);
	/* let the others stop waiting for this rank (processes: they learn it when its
	 * bootstrap leaves) */
	if (r->w->group)
		dvx_bootstrap_tgroup_abort(r->w->group, r->rank);
}

/* the sim's NIC table with obj_query hooked: one per process (every fabric shares it) */
static const struct dvx_hal_nic_ops *w_sim_nic;
static struct dvx_hal_nic_ops w_hooked_nic;
static wquery_fn w_query_hook;

static int w_obj_query(struct dvx_hal_nic *nic, struct dvx_hal_obj *obj, const void *in,
		       size_t inlen, void *out, size_t outlen)
{
	int err = w_sim_nic->obj_query(nic, obj, in, inlen, out, outlen);

	if (!err && w_query_hook)
		w_query_hook(in, out, outlen);
	return err;
}

static const struct dvx_hal *rank_hal(struct wrank *r)
{
	const struct dvx_hal *sim = dvx_sim_hal(r->w->fab);

	if (!r->w->cfg.query_hook)
		return sim;
	r->hooked = *sim;
	r->hooked.nic = &w_hooked_nic;
	return &r->hooked;
}

static void *aligned(size_t align, size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, align, len ? len : align))
		return NULL;
	memset(p, 0, len);
	return p;
}

/* least privilege (docs/security.md): @remote is the one right peers need there */
static int reg(struct wrank *r, void *p, uint64_t len, uint32_t remote, struct dvx_mr *mr)
{
	struct dvx_mr_cfg a;

	memset(&a, 0, sizeof(a));
	a.addr = p;
	a.len = len;
	a.access = DVX_ACCESS_LOCAL_WRITE | remote;
	a.dmabuf_fd = -1;
	return dvx_mr_reg(&r->nic, &a, mr);
}

/* the data area in device memory: a dma-buf the fabric reaches through @dma, an MR
 * from it (the descriptor closes as a dma-buf does; the MR keeps the memory) */
static int reg_gpu(struct wrank *r, const struct dvx_sim_dma *dma, uint64_t len, struct dvx_mr *mr)
{
	struct dvx_mr_cfg a;
	int fd = -1, err;

	if (r->w->procs != WORLD_THREADS)
		return -EOPNOTSUPP;
	err = dvx_sim_dmabuf_export_dma(r->w->fab, (uint64_t)(uintptr_t)r->data, len, dma, &fd);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.addr = r->data;
	a.len = len;
	a.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE;
	a.flags = DVX_MR_F_DMABUF;
	a.dmabuf_fd = fd;
	a.dmabuf_offset = 0;
	err = dvx_mr_reg(&r->nic, &a, mr);
	dvx_hal_fd_close(dvx_sim_hal(r->w->fab), fd);
	return err;
}

/* world_cfg.dev_data: the rank's "device memory", r->data behind these copies */
#define W_DEV_BASE 0x7e0000000000ull
#define W_DEV_STRIDE (1ull << 36)

static int wdev_range(const struct wrank *r, uint64_t a, uint64_t len)
{
	return a >= r->dev_addr && a - r->dev_addr <= r->dev_len &&
	       len <= r->dev_len - (a - r->dev_addr);
}

static int wdev_read(void *arg, void *dst, uint64_t src, uint64_t len)
{
	struct wrank *r = arg;

	if (!wdev_range(r, src, len))
		return -EFAULT;
	memcpy(dst, r->data + (src - r->dev_addr), len);
	return 0;
}

static int wdev_write(void *arg, uint64_t dst, const void *src, uint64_t len)
{
	struct wrank *r = arg;

	if (!wdev_range(r, dst, len))
		return -EFAULT;
	memcpy(r->data + (dst - r->dev_addr), src, len);
	return 0;
}

/* the data MR over device memory (world_cfg.dev_data) */
static int reg_dev(struct wrank *r, struct dvx_mr *mr)
{
	struct dvx_mr_cfg a;
	int err;

	r->dev_addr = W_DEV_BASE + (uint64_t)r->rank * W_DEV_STRIDE;
	r->dev_dma.read = wdev_read;
	r->dev_dma.write = wdev_write;
	r->dev_dma.arg = r;
	err = dvx_sim_dmabuf_export_dma(r->w->fab, r->dev_addr, r->dev_len, &r->dev_dma,
					&r->dev_fd);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.addr = (void *)(uintptr_t)r->dev_addr;
	a.len = r->dev_len;
	a.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE;
	a.flags = DVX_MR_F_DMABUF;
	a.dmabuf_fd = r->dev_fd;
	err = dvx_mr_reg(&r->nic, &a, mr);
	if (err) {
		dvx_sim_dmabuf_release(r->w->fab, r->dev_fd);
		r->dev_fd = -1;
	}
	return err;
}

/* phase open: the rank's NIC */
static int rank_open_nic(struct wrank *r)
{
	struct dvx_nic_cfg na;
	char name[32];
	int err;

	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", r->rank);
	na.name = name;
	na.gid_index = -1;
	err = dvx_nic_open(&r->nic, rank_hal(r), &na);
	if (err)
		wfail(r, __LINE__, err, "dvx_nic_open = %d", err);
	return err;
}

/* phase configure: the transport the world asks of this rank */
static void rank_p2p_cfg(struct wrank *r, struct dvx_p2p_cfg *pc)
{
	const struct world_cfg *c = &r->w->cfg;

	memset(pc, 0, sizeof(*pc));
	pc->rank = r->rank;
	pc->nranks = c->nranks;
	pc->nnics = 1;
	pc->nics[0] = &r->nic;
	pc->qps_per_nic = c->qps_per_nic;
	pc->sq_depth = c->sq_depth;
	pc->comp_depth = c->comp_depth;
	pc->flags = (c->local_pair ? DVX_P2P_F_LOCAL_PAIR : 0) |
		    (c->read == 1 ? DVX_P2P_F_READ : 0) |
		    (c->gpu_recover ? DVX_P2P_F_GPU_RECOVER : 0);
	pc->bs = &r->bs;
	pc->timeout_ns = 30 * W_SEC;
	if (c->subset) {
		static __thread int32_t peers[W_MAX_RANKS];
		int p;

		pc->peers = peers;
		for (p = 0; p < c->nranks; p++)
			if (p != r->rank && c->link[r->rank][p])
				peers[pc->npeers++] = p;
	}
	if (c->conn_mtu) {
		dvx_qp_connect_cfg_init(&pc->conn);
		pc->conn.max_mtu = c->conn_mtu;
	}
}

/* phase memory: the transport's state and rings, the data, signal and counter words */
static int rank_alloc(struct wrank *r, const struct dvx_mem_req *sreq,
		      const struct dvx_mem_req *rreq)
{
	const struct world_cfg *c = &r->w->cfg;
	uint64_t nwords = (uint64_t)c->nranks * c->nslots;

	r->state = aligned(64, sreq->bytes);
	r->rings = aligned(4096, rreq->bytes);
	r->rings_len = rreq->bytes;
	r->data = c->data_dma[r->rank] ? (uint8_t *)(uintptr_t)c->data_dev[r->rank] :
					 aligned(4096, (size_t)c->slot_bytes * 2 * c->nranks);
	r->sig = aligned(64, nwords * 8);
	r->ctr = aligned(64, nwords * 8);
	if (!r->state || !r->rings || !r->data || !r->sig || !r->ctr) {
		wfail(r, __LINE__, -ENOMEM, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* phase transport: dvx_p2p_init(), or the failure the world expects of it (0: up) */
static int rank_init(struct wrank *r, const struct dvx_p2p_cfg *pc,
		     const struct dvx_mem_req *sreq, const struct dvx_mem_req *rreq)
{
	const struct world_cfg *c = &r->w->cfg;
	int err = dvx_p2p_init(&r->t, pc, r->state, sreq->bytes, r->rings, rreq->bytes);

	if (c->init_err) {
		r->init_diag = r->nic.hal.diag;
		if (err != c->init_err)
			wfail(r, __LINE__, err, "dvx_p2p_init = %d, want %d", err, c->init_err);
		else if (r->init_diag.err != err || !r->init_diag.msg[0])
			wfail(r, __LINE__, -1, "after the failed init the NIC's record is err %d "
			      "\"%s\"", r->init_diag.err, r->init_diag.msg);
		return err ? err : -EINVAL;
	}
	if (err)
		wfail(r, __LINE__, err, "dvx_p2p_init = %d", err);
	return err;
}

/*
 * phase buffers: data (puts land there), signals (fetch-adds, and the write of
 * dvx_p2p_reset_signal()) and counters (only fetch-adds) registered, the data and
 * signal buffers exchanged with every rank
 */
static int rank_buffers(struct wrank *r, const struct dvx_p2p_cfg *pc)
{
	const struct world_cfg *c = &r->w->cfg;
	uint64_t nwords = (uint64_t)c->nranks * c->nslots, dlen = c->slot_bytes * 2 * c->nranks;
	struct dvx_mr *mrs[1];
	int err;

	r->dev_fd = -1;
	r->dev_len = dlen;
	if ((err = c->data_dma[r->rank] ? reg_gpu(r, c->data_dma[r->rank], dlen, &r->data_mr) :
		   c->dev_data ? reg_dev(r, &r->data_mr) :
		   reg(r, r->data, dlen, DVX_ACCESS_REMOTE_WRITE |
		       (c->read ? DVX_ACCESS_REMOTE_READ : 0), &r->data_mr)) ||
	    (err = reg(r, r->sig, nwords * 8, DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_ATOMIC,
		       &r->sig_mr)) ||
	    (err = reg(r, r->ctr, nwords * 8, DVX_ACCESS_REMOTE_ATOMIC, &r->ctr_mr))) {
		wfail(r, __LINE__, err, "dvx_mr_reg = %d", err);
		return err;
	}
	mrs[0] = &r->data_mr;
	err = dvx_p2p_lbuf_init(&r->data_l,
				c->dev_data ? (void *)(uintptr_t)r->dev_addr : (void *)r->data,
				dlen, mrs, 1);
	mrs[0] = &r->sig_mr;
	if (!err)
		err = dvx_p2p_lbuf_init(&r->sig_l, r->sig, nwords * 8, mrs, 1);
	mrs[0] = &r->ctr_mr;
	if (!err)
		err = dvx_p2p_lbuf_init(&r->ctr_l, r->ctr, nwords * 8, mrs, 1);
	if (!err)
		err = dvx_p2p_exchange(&r->t, &r->bs, &r->data_l, r->data_r, pc->timeout_ns);
	if (!err)
		err = dvx_p2p_exchange(&r->t, &r->bs, &r->sig_l, r->sig_r, pc->timeout_ns);
	if (err)
		wfail(r, __LINE__, err, "buffer exchange = %d", err);
	return err;
}

/* phase quiesce, after the body: nobody tears down while a peer still posts to it */
static void rank_quiesce(struct wrank *r)
{
	uint32_t ch;
	int err = 0;

	if (r->alone || r->fail_line)
		return;		/* nothing to close with (a rank died), or failed already */
	if (!r->no_final_flush)
		for (ch = 0; ch < r->t.nlanes && !err; ch++)
			err = dvx_p2p_flush(&r->t, ch, 30 * W_SEC, NULL);
	if (!err)
		err = dvx_bootstrap_barrier(&r->bs, 60 * W_SEC);
	if (err)
		wfail(r, __LINE__, err, "closing flush/barrier = %d", err);
}

/* phase close: the MRs (and the device memory's dma-buf), the transport */
static void rank_close(struct wrank *r)
{
	if (r->ctr_mr.live)
		dvx_mr_dereg(&r->ctr_mr);
	if (r->sig_mr.live)
		dvx_mr_dereg(&r->sig_mr);
	if (r->data_mr.live)
		dvx_mr_dereg(&r->data_mr);
	if (r->dev_fd >= 0)
		dvx_sim_dmabuf_release(r->w->fab, r->dev_fd);
	dvx_p2p_fini(&r->t);
}

static void rank_free(struct wrank *r)
{
	free(r->ctr);
	free(r->sig);
	if (!r->w->cfg.data_dma[r->rank])
		free(r->data);
	free(r->rings);
	free(r->state);
}

/* one rank, in its phases: open, configure, size, memory, transport, buffers, the
 * world's body, quiesce, close */
static void rank_body(struct wrank *r)
{
	struct dvx_p2p_cfg pc;
	struct dvx_mem_req sreq, rreq;
	int err;

	if (rank_open_nic(r))
		return;
	rank_p2p_cfg(r, &pc);
	err = dvx_p2p_mem_req(&pc, &sreq, &rreq);
	if (err) {
		wfail(r, __LINE__, err, "dvx_p2p_mem_req = %d", err);
	} else if (!rank_alloc(r, &sreq, &rreq) && !rank_init(r, &pc, &sreq, &rreq)) {
		if (!rank_buffers(r, &pc)) {
			r->w->body(r);
			rank_quiesce(r);
		}
		rank_close(r);
	}
	if (!err)
		rank_free(r);
	dvx_nic_close(&r->nic);
}

static void *rank_thread(void *arg)
{
	struct wrank *r = arg;
	int err = dvx_bootstrap_thread_init(&r->bs, r->w->group, r->rank);

	if (err) {
		wfail(r, __LINE__, err, "dvx_bootstrap_thread_init = %d", err);
		return NULL;
	}
	rank_body(r);
	dvx_bootstrap_fini(&r->bs);
	return NULL;
}

static void fabric_cfg(const struct world_cfg *c, struct dvx_sim_fabric_cfg *fc)
{
	dvx_sim_fabric_cfg_default(fc);
	fc->max_qps = (uint32_t)(c->nranks * c->qps_per_nic * 3 + 8) + c->extra_objs;
	fc->max_cqs = fc->max_qps;
	fc->max_umems = 16 + c->extra_objs;
	fc->max_mrs += c->extra_objs;
}

/* rank @rank's NIC as the world makes it (every process knows every rank's) */
static void nic_cfg(const struct world_cfg *c, int rank, struct dvx_sim_nic_cfg *nc)
{
	dvx_sim_nic_cfg_default(nc, (unsigned)rank);
	if (c->no_loopback)
		nc->force_loopback = 0;
	if (c->ib)
		nc->port[0].link_layer = DVX_LINK_LAYER_IB;
}

static int add_nic(const struct world_cfg *c, struct dvx_sim_fabric *fab, int rank)
{
	struct dvx_sim_nic_cfg nc;

	nic_cfg(c, rank, &nc);
	return dvx_sim_add_nic(fab, &nc);
}

/* the strict doorbell model's faults fail the run */
static int db_check(struct dvx_sim_fabric *fab, int err)
{
	struct dvx_sim_db_fault f;
	int nf = dvx_sim_db_faults(fab, &f);

	if (nf > 0) {
		fprintf(stderr, "the software NIC refused %d doorbell(s); the first: kind %u, "
			"nic %u, qpn 0x%x, index %u, record %u, last %u\n", nf, f.kind,
			f.nic, f.qpn, f.index, f.record, f.last);
		if (!err)
			err = -EPROTO;
	}
	if (getenv("DVX_SIM_DB_STATS")) {
		struct dvx_sim_stats st;

		if (!dvx_sim_get_stats(fab, &st))
			fprintf(stderr, "doorbells %llu, rescued %llu, faults %llu\n",
				(unsigned long long)st.doorbells,
				(unsigned long long)st.db_rescued,
				(unsigned long long)st.db_faults);
	}
	return err;
}

/* ---- ranks as processes ---------------------------------------------------------- */

/* a cmocka test's skip(), where the program is one (tests/lib/dvx_test.c); the
 * benchmarks that use the world have none */
void world_skip(void) __attribute__((weak));

/* the MPI job's first context: MPI started by dvx, finished at exit with it */
static struct dvx_bootstrap w_mpi_root;
static uint64_t w_mpi_mem[DVX_BOOTSTRAP_MPI_MEM_SIZE(W_MAX_RANKS * 4) / 8];
static int w_mpi_up;
static int w_mpi_lost;	/* a rank of the job was killed: no MPI_Finalize at the end */

static void w_mpi_exit(void)
{
	if (!w_mpi_lost)
		dvx_bootstrap_fini(&w_mpi_root);
}

void world_exit(int rc)
{
	fflush(NULL);
	/* Open MPI's MPI_Finalize() can wait for ever for a process that died; the
	 * launcher's recovery mode (scripts/mpirun.sh DVX_MPI_RECOVERY=1) takes an exit
	 * without it */
	if (w_mpi_lost)
		_exit(rc);
	exit(rc);
}

static int mpi_root(void)
{
	struct dvx_bootstrap_mpi_cfg a;
	int err;

	if (w_mpi_up)
		return 0;
	memset(&a, 0, sizeof(a));
	a.flags = DVX_BOOTSTRAP_MPI_F_INIT;
	err = dvx_bootstrap_mpi_init(&w_mpi_root, &a, w_mpi_mem, sizeof(w_mpi_mem));
	if (err)
		return err;
	w_mpi_up = 1;
	atexit(w_mpi_exit);
	return 0;
}

/* world_proc()'s bootstrap: a duplicate of the MPI job's, or the sockets adapter at
 * @bsaddr; sets w->me */
static int world_proc_bootstrap(struct world *w, int mode, int rank, const char *bsaddr)
{
	const struct world_cfg *c = &w->cfg;
	struct dvx_bootstrap_sock_cfg ba;
	size_t bsz;
	int err = 0, i;

	if (mode == WORLD_MPI) {
		err = mpi_root();
		if (!err && dvx_bootstrap_nranks(&w_mpi_root) != c->nranks)
			err = -ERANGE;
		rank = err ? 0 : dvx_bootstrap_rank(&w_mpi_root);
	}
	w->me = rank;
	for (i = 0; i < c->nranks; i++) {
		/* only this rank's is used; the others name their rank (wnic_index()) */
		w->r[i].w = w;
		w->r[i].rank = i;
	}
	if (mode == WORLD_MPI) {
		if (!err)
			err = dvx_bootstrap_dup(&w_mpi_root, &w->r[rank].bs);
		if (c->victim)
			w_mpi_lost = 1;
		return err;
	}
	bsz = dvx_bootstrap_sock_mem_size(c->nranks, 64, 4096);
	memset(&ba, 0, sizeof(ba));
	ba.addr = bsaddr;
	ba.rank = rank;
	ba.nranks = c->nranks;
	ba.max_unexpected = 64;
	ba.slot_bytes = 4096;
	ba.timeout_ns = 60 * W_SEC;
	w->bs_mem = aligned(8, bsz);
	return w->bs_mem ? dvx_bootstrap_sock_init(&w->r[rank].bs, &ba, w->bs_mem, bsz) : -ENOMEM;
}

/* a process's fabric (w->fab, its memory w->fab_mem) with rank @rank's NIC: 0, or an
 * error with nothing made (the memory is the caller's to free) */
static int proc_fabric(struct world *w, int rank)
{
	struct dvx_sim_fabric_cfg fc;
	size_t fsz;
	int err;

	fabric_cfg(&w->cfg, &fc);
	fc.max_nics = 1;
	fsz = dvx_sim_fabric_mem_size(&fc);
	w->fab_mem = malloc(fsz);
	err = w->fab_mem ? dvx_sim_fabric_init(w->fab_mem, fsz, &fc, &w->fab) : -ENOMEM;
	if (err)
		return err;
	err = add_nic(&w->cfg, w->fab, rank);
	if (err < 0) {
		dvx_sim_fini(w->fab);
		return err;
	}
	return 0;
}

/* world_proc()'s software NIC: its fabric and NIC, the wire to the other processes
 * joined through the bootstrap, started. 0, or an error with the fabric finished */
static int world_proc_fabric(struct world *w, struct wrank *r)
{
	const struct world_cfg *c = &w->cfg;
	struct dvx_bootstrap_wire_cfg wa;
	size_t wsz;
	int err;

	err = proc_fabric(w, w->me);
	if (err)
		return err;
	if (c->query_hook) {
		w_sim_nic = dvx_sim_hal(w->fab)->nic;
		w_hooked_nic = *w_sim_nic;
		w_hooked_nic.obj_query = w_obj_query;
	}
	memset(&wa, 0, sizeof(wa));
	wa.fab = w->fab;
	wa.min_retry_ns = c->wire_retry_ns;
	/* the largest put is a slot: the wire's frames need not be larger */
	wa.max_msg = (uint32_t)(c->slot_bytes < 4096 ? 4096 : c->slot_bytes);
	wsz = dvx_bootstrap_wire_mem_size(c->nranks, wa.max_msg);
	w->wire_mem = malloc(wsz);
	err = w->wire_mem ? dvx_bootstrap_wire_join(&r->bs, &wa, w->wire_mem, wsz, 60 * W_SEC) :
			    -ENOMEM;
	if (!err)
		err = dvx_sim_start(w->fab);
	if (!err)
		return 0;
	fprintf(stderr, "rank %d: the wire: %d\n", w->me, err);
	dvx_sim_fini(w->fab);
	return err;
}

/* world_proc()'s report of a failed rank, with its wire's counters */
static void world_proc_report(struct world *w, const struct wrank *r)
{
	struct dvx_sim_wire_stats ws;

	fprintf(stderr, "rank %d failed at line %d: %s (err %d)\n", w->me, r->fail_line,
		r->fail_msg, r->fail_err);
	if (!dvx_sim_wire_get_stats(w->fab, &ws))
		fprintf(stderr, "rank %d: the wire: %llu frames sent, %llu received, %llu "
			"requests (%llu again), %llu duplicates, %llu dropped, %llu peers "
			"gone\n", w->me, (unsigned long long)ws.frames_tx,
			(unsigned long long)ws.frames_rx, (unsigned long long)ws.requests,
			(unsigned long long)ws.retransmits, (unsigned long long)ws.duplicates,
			(unsigned long long)ws.dropped, (unsigned long long)ws.peers_down);
	else
		return;
	fprintf(stderr, "rank %d: the wire's drops by reason (enum dvx_sim_wire_drop):",
		w->me);
	for (int i = 0; i < DVX_SIM_WDROP_NKINDS; i++)
		fprintf(stderr, " %llu", (unsigned long long)ws.drop_why[i]);
	fprintf(stderr, "; the last: reason %u, QP 0x%x, PSN 0x%x, expected 0x%x, state %u; "
		"%llu retries exhausted, the last QP 0x%x PSN 0x%x to rank %d (quiet %u ms); "
		"%llu stale answers; %llu stalls of this process (%llu ms)\n", ws.last_drop.why, ws.last_drop.qpn, ws.last_drop.psn,
		ws.last_drop.epsn, ws.last_drop.state, (unsigned long long)ws.retry_exceeded,
		ws.last_retry_exc.qpn, ws.last_retry_exc.psn, ws.last_retry_exc.rank,
		ws.last_retry_exc.quiet_ms, (unsigned long long)ws.stale_answers,
		(unsigned long long)ws.stalls, (unsigned long long)(ws.stalled_ns / 1000000u));
}

/* world_proc()'s verdict: every rank returns the same, the first rank's error if any
 * (not when a rank died: each its own) */
static int world_proc_verdict(struct world *w, struct wrank *r, int err)
{
	int32_t errs[W_MAX_RANKS];
	int i;

	errs[w->me] = err;
	if (w->cfg.victim ||
	    dvx_bootstrap_allgather(&r->bs, &errs[w->me], errs, sizeof(errs[0]), 30 * W_SEC))
		return err;
	for (i = 0; i < w->cfg.nranks; i++)
		if (errs[i])
			return i == w->me ? errs[i] : err ? err : -EIO;
	return err;
}

/*
 * One rank in this process, in its phases: the bootstrap, the software NIC and the
 * wire, the rank (rank_body()), the report and the common verdict, the teardown.
 * Return: 0 when every rank passed, else this rank's error or -EIO for another's.
 */
static int world_proc(const struct world_cfg *c, wbody_fn body, void *user, int mode, int rank,
		      const char *bsaddr, const char *dir)
{
	struct world *w;
	struct wrank *r;
	int err;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	if (dir)
		snprintf(w->dir, sizeof(w->dir), "%s", dir);
	w->cfg = *c;
	w->cfg.progress_thread = 1;	/* a rank blocked in its bootstrap still answers */
	w->body = body;
	w->procs = mode;
	w_query_hook = c->query_hook;
	err = world_proc_bootstrap(w, mode, rank, bsaddr);
	r = &w->r[w->me];
	r->user = user;
	if (err) {
		fprintf(stderr, "rank %d: the bootstrap: %d\n", w->me, err);
		free(w->bs_mem);
		free(w);
		return err;
	}
	err = world_proc_fabric(w, r);
	if (!err) {
		rank_body(r);
		dvx_sim_stop(w->fab);
		if (r->fail_line)
			world_proc_report(w, r);
		err = world_proc_verdict(w, r, db_check(w->fab, r->fail_line ? r->fail_err : 0));
		dvx_sim_fini(w->fab);
	}
	dvx_bootstrap_fini(&r->bs);
	free(w->wire_mem);
	free(w->fab_mem);
	free(w->bs_mem);
	free(w);
	return err;
}

char *world_rejoin_path(const struct wrank *r, const char *what, char *buf, size_t len)
{
	snprintf(buf, len, "%s/rj-%s", r->w->dir, what);
	return buf;
}

/* the run's folder and what the ranks left in it */
static void world_rmdir(const char *dir)
{
	char p[400];
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) < (int)sizeof(p))
			unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/*
 * A killed rank's process started again (cfg.restart): rank @rank's NIC on a fabric of
 * its own, a wire of the job's shape that listens at world_rejoin_path(r, "wire") and
 * knows every other rank's NIC but joins nobody (the survivors' mesh listeners are
 * closed: they join it), started with its progress thread. No bootstrap: the group's
 * sockets bootstrap has marked this rank gone for good; the body meets the survivors
 * through files in the run's folder. 0 when the body passed.
 */
static int world_restarted(const struct world_cfg *c, void *user, int rank, const char *dir)
{
	struct dvx_sim_wire_cfg wc;
	struct dvx_hal_sock_addr bind, at;
	struct world *w;
	struct wrank *r;
	char path[160];
	size_t wsz;
	int err, j;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cfg = *c;
	w->cfg.progress_thread = 1;
	w->procs = WORLD_FORK;
	w->me = rank;
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	for (j = 0; j < c->nranks; j++) {
		w->r[j].w = w;
		w->r[j].rank = j;
	}
	r = &w->r[rank];
	r->user = user;
	err = proc_fabric(w, rank);
	if (err)
		goto out;
	memset(&wc, 0, sizeof(wc));
	wc.rank = rank;
	wc.nranks = c->nranks;
	wc.max_msg = (uint32_t)(c->slot_bytes < 4096 ? 4096 : c->slot_bytes);	/* the job's */
	wc.max_remote_nics = (uint32_t)c->nranks;
	wc.min_retry_ns = c->wire_retry_ns;
	wc.ring_bytes = DVX_BOOTSTRAP_WIRE_RING_DEFAULT;
	wsz = dvx_sim_wire_mem_size(&wc);
	w->wire_mem = calloc(1, wsz);
	err = w->wire_mem ? dvx_sim_wire_init(w->fab, &wc, w->wire_mem, wsz) : -ENOMEM;
	memset(&bind, 0, sizeof(bind));
	bind.family = DVX_HAL_SOCK_UNIX;
	world_rejoin_path(r, "wire", path, sizeof(path));
	if (strlen(path) >= sizeof(bind.path))
		err = err ? err : -ENAMETOOLONG;
	else
		memcpy(bind.path, path, strlen(path) + 1);
	if (!err)
		err = dvx_sim_wire_listen(w->fab, &bind, &at);
	for (j = 0; !err && j < c->nranks; j++) {
		struct dvx_sim_nic_cfg nc;

		if (j == rank)
			continue;
		nic_cfg(c, j, &nc);
		err = dvx_sim_wire_add_remote_nic(w->fab, j, &nc);
	}
	if (!err)
		err = dvx_sim_start(w->fab);
	if (err) {
		fprintf(stderr, "rank %d restarted: its wire: %d\n", rank, err);
		goto fab;
	}
	if (!rank_open_nic(r)) {
		c->restart(r);
		dvx_nic_close(&r->nic);
	}
	dvx_sim_stop(w->fab);
	if (r->fail_line)
		fprintf(stderr, "rank %d restarted: failed at line %d: %s (err %d)\n", rank,
			r->fail_line, r->fail_msg, r->fail_err);
	err = db_check(w->fab, r->fail_line ? (r->fail_err ? r->fail_err : -EIO) : 0);
fab:
	dvx_sim_fini(w->fab);
out:
	free(w->wire_mem);
	free(w->fab_mem);
	free(w);
	return err;
}

/* the victim is waited for first (it dies before the others end), then its rank is
 * started again in a new process (pid[nranks]); pid[victim] is 0 afterwards */
static int world_fork_restart(const struct world_cfg *c, void *user, const char *dir, pid_t *pid)
{
	int v = c->victim - 1, st;

	if (pid[v] < 0 || waitpid(pid[v], &st, 0) != pid[v])
		return -EIO;
	pid[v] = 0;
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
		/* the run failed before the kill: nobody waits for a restarted rank */
		fprintf(stderr, "rank %d: should have been killed, exited with %d\n", v,
			WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -EIO;
	}
	fflush(NULL);
	pid[c->nranks] = fork();
	if (pid[c->nranks] == 0) {
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		signal(SIGFPE, SIG_DFL);
		signal(SIGABRT, SIG_DFL);
		st = world_restarted(c, user, v, dir);
		fflush(NULL);
		_exit(st ? 1 : 0);
	}
	return pid[c->nranks] < 0 ? -errno : 0;
}

static int world_fork(const struct world_cfg *c, wbody_fn body, void *user)
{
	char dir[64], addr[96];
	pid_t pid[W_MAX_RANKS + 1];
	int i, st, err = 0;

	for (i = 0; i <= W_MAX_RANKS; i++)
		pid[i] = -1;
	snprintf(dir, sizeof(dir), "/tmp/dvx-world-XXXXXX");
	if (!mkdtemp(dir))
		return -errno;
	snprintf(addr, sizeof(addr), "unix:%s/bs", dir);
	for (i = 0; i < c->nranks; i++) {
		fflush(NULL);
		pid[i] = fork();
		if (pid[i] == 0) {
			/* a crash in a rank is that rank's, not the test runner's to catch */
			signal(SIGSEGV, SIG_DFL);
			signal(SIGBUS, SIG_DFL);
			signal(SIGILL, SIG_DFL);
			signal(SIGFPE, SIG_DFL);
			signal(SIGABRT, SIG_DFL);
			st = world_proc(c, body, user, WORLD_FORK, i, addr, dir);
			fflush(NULL);
			_exit(st ? 1 : 0);
		}
	}
	if (c->victim && c->restart)
		err = world_fork_restart(c, user, dir, pid);
	for (i = 0; i < c->nranks; i++) {
		if (pid[i] == 0)
			continue;	/* the victim, waited for by world_fork_restart() */
		if (pid[i] < 0 || waitpid(pid[i], &st, 0) != pid[i]) {
			err = err ? err : -EIO;
			continue;
		}
		if (WIFSIGNALED(st) && c->victim != i + 1)
			fprintf(stderr, "rank %d: killed by signal %d\n", i, WTERMSIG(st));
		if (c->victim == i + 1 && !WIFSIGNALED(st))
			fprintf(stderr, "rank %d: should have been killed, exited with %d\n", i,
				WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		if (c->victim == i + 1)	/* it must have died, killed */
			err = err ? err : WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? 0 : -EIO;
		else if (!WIFEXITED(st) || WEXITSTATUS(st))
			err = err ? err : -EIO;
	}
	if (c->victim && c->restart && pid[c->nranks] > 0) {
		/* the restarted rank */
		if (waitpid(pid[c->nranks], &st, 0) != pid[c->nranks] || !WIFEXITED(st) ||
		    WEXITSTATUS(st)) {
			fprintf(stderr, "rank %d restarted: failed\n", c->victim - 1);
			err = err ? err : -EIO;
		}
	}
	world_rmdir(dir);
	return err;
}

/* how the ranks run: the cfg's choice, else WORLD_MPI under a launcher, WORLD_FORK with
 * DVX_WORLD_PROCS=1, threads otherwise */
int world_mode(const struct world_cfg *c)
{
	const char *e = getenv("DVX_WORLD_PROCS");

	if (c->procs)
		return c->procs;
	if (dvx_bootstrap_mpi_launched())
		return WORLD_MPI;
	return e && e[0] == '1' ? WORLD_FORK : WORLD_THREADS;
}

int world_run(const struct world_cfg *c, wbody_fn body, void *user)
{
	struct world *w;
	struct dvx_sim_fabric_cfg fc;
	struct dvx_bootstrap_tgroup_cfg ga;
	size_t fsz, gsz;
	int i, err = 0;

	if (c->nranks < 2 || c->nranks > W_MAX_RANKS)
		return -EINVAL;
	switch (world_mode(c)) {
	case WORLD_FORK:
		return world_fork(c, body, user);
	case WORLD_MPI:
		if (mpi_root())
			return -EIO;
		if (dvx_bootstrap_nranks(&w_mpi_root) != c->nranks) {
			/* a world of another size than the job: not this run's (cmocka skip) */
			if (world_skip)
				world_skip();
			return -ERANGE;
		}
		return world_proc(c, body, user, WORLD_MPI, 0, NULL, NULL);
	default:
		break;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cfg = *c;
	w->body = body;
	fabric_cfg(c, &fc);
	fc.max_nics = (uint32_t)c->nranks;
	fsz = dvx_sim_fabric_mem_size(&fc);
	w->fab_mem = fsz ? malloc(fsz) : NULL;
	if (!w->fab_mem || (err = dvx_sim_fabric_init(w->fab_mem, fsz, &fc, &w->fab)))
		goto out;
	w_query_hook = c->query_hook;
	if (c->query_hook) {
		w_sim_nic = dvx_sim_hal(w->fab)->nic;
		w_hooked_nic = *w_sim_nic;
		w_hooked_nic.obj_query = w_obj_query;
	}
	for (i = 0; i < c->nranks; i++) {
		err = add_nic(c, w->fab, i);
		if (err < 0)
			goto fab;
		err = 0;
	}
	memset(&ga, 0, sizeof(ga));
	ga.nranks = c->nranks;
	ga.max_unexpected = 64;
	ga.slot_bytes = 4096;
	gsz = dvx_bootstrap_tgroup_mem_size(ga.nranks, ga.max_unexpected, ga.slot_bytes);
	w->bs_mem = calloc(1, gsz);
	if (!w->bs_mem || (err = dvx_bootstrap_tgroup_init(&w->group, &ga, w->bs_mem, gsz)))
		goto fab;
	if (c->progress_thread && (err = dvx_sim_start(w->fab)))
		goto grp;
	for (i = 0; i < c->nranks; i++) {
		w->r[i].w = w;
		w->r[i].rank = i;
		w->r[i].user = user;
		if (pthread_create(&w->r[i].thread, NULL, rank_thread, &w->r[i])) {
			err = -EAGAIN;
			c = &w->cfg;
			break;
		}
	}
	while (i-- > 0)
		pthread_join(w->r[i].thread, NULL);
	for (i = 0; i < c->nranks; i++)
		if (w->r[i].fail_line) {
			fprintf(stderr, "rank %d failed at line %d: %s (err %d)\n", i,
				w->r[i].fail_line, w->r[i].fail_msg, w->r[i].fail_err);
			if (!err)
				err = w->r[i].fail_err;
		}
	if (c->progress_thread)
		dvx_sim_stop(w->fab);
	err = db_check(w->fab, err);
grp:
	dvx_bootstrap_tgroup_fini(w->group);
fab:
	dvx_sim_fini(w->fab);
out:
	free(w->bs_mem);
	free(w->fab_mem);
	free(w);
	return err;
}
