// SPDX-License-Identifier: MIT
/*
 * tests/ht/hworld.c - see hworld.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dvx/bootstrap/wire.h>

#include "hworld.h"
#include "../lib/sim_fab.h"

#define HW_SLOTS 64		/* bootstrap mailbox slots per rank */

uint64_t hw_now(void)
{
	struct timespec t;

	return clock_gettime(CLOCK_MONOTONIC, &t) ? 0 : (uint64_t)t.tv_sec * HW_SEC + (uint64_t)t.tv_nsec;
}

/* @len bytes (rounded up to @align, at least 64) aligned to @align, a power of two */
static void *hw_alloc(uint64_t len, uint64_t align)
{
	if (align < 64)
		align = 64;
	return aligned_alloc(align, (len + align - 1) & ~(align - 1));
}

/* rank @i's NIC @name and its two registered buffers */
static int rank_up_nic(struct hw *w, int i, const struct dvx_hal *hal, const char *name)
{
	struct hw_rank *r = &w->r[i];
	struct dvx_nic_cfg na;
	struct dvx_mr_cfg ma;
	int err;

	memset(&na, 0, sizeof(na));
	na.name = name;
	err = dvx_nic_open(&r->nic, hal, &na);
	if (err)
		return err;
	r->sbuf = hw_alloc(w->buf_len, 4096);
	r->rbuf = hw_alloc(w->buf_len, 4096);
	if (!r->sbuf || !r->rbuf)
		return -ENOMEM;
	memset(r->rbuf, 0, w->buf_len);
	memset(&ma, 0, sizeof(ma));
	ma.addr = r->sbuf;
	ma.len = w->buf_len;
	ma.access = DVX_ACCESS_LOCAL_WRITE;
	err = dvx_mr_reg(&r->nic, &ma, &r->smr);
	if (err)
		return err;
	ma.addr = r->rbuf;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE;
	return dvx_mr_reg(&r->nic, &ma, &r->rmr);
}

static int rank_up(struct hw *w, int i, const struct dvx_hal *hal, const char *dev)
{
	char name[64];
	int err;

	snprintf(name, sizeof(name), "%s", dev ? dev : "");
	if (!dev)
		snprintf(name, sizeof(name), "sim_%d", i);
	err = dvx_bootstrap_thread_init(&w->r[i].bs, w->g, i);
	return err ? err : rank_up_nic(w, i, hal, name);
}

int hw_init(struct hw *w, int n, uint64_t buf_len)
{
	return hw_init_hal(w, n, buf_len, NULL, NULL);
}

int hw_init_hal(struct hw *w, int n, uint64_t buf_len, const struct dvx_hal *hal,
		const char *const *devs)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_bootstrap_tgroup_cfg ga;
	size_t gsz;
	int i, err;

	memset(w, 0, sizeof(*w));
	if (n < 2 || n > HW_MAX)
		return -EINVAL;
	w->n = n;
	w->buf_len = buf_len;
	if (!hal) {
		dvx_sim_fabric_cfg_default(&fc);
		fc.max_qps = 256;
		fc.max_cqs = 64;
		fc.max_mrs = 64;
		fc.max_umems = 64;
		err = dvx_test_fabric(&fc, 0, n, &w->fab_mem, &w->fab);
		if (err)
			return err;
		hal = dvx_sim_hal(w->fab);
		devs = NULL;
	}
	memset(&ga, 0, sizeof(ga));
	ga.nranks = n;
	ga.max_unexpected = HW_SLOTS;
	ga.slot_bytes = DVX_HT_HELLO_BYTES;
	gsz = dvx_bootstrap_tgroup_mem_size(n, HW_SLOTS, DVX_HT_HELLO_BYTES);
	w->bs_mem = hw_alloc(gsz, 64);
	if (!w->bs_mem)
		return -ENOMEM;
	err = dvx_bootstrap_tgroup_init(&w->g, &ga, w->bs_mem, gsz);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		err = rank_up(w, i, hal, devs ? devs[i] : NULL);
		if (err)
			return err;
	}
	return 0;
}

int hw_fini(struct hw *w)
{
	int i, j, err, first = 0;

	for (i = 0; i < w->n; i++) {
		struct hw_rank *r = &w->r[i];

		if (r->cache.live == DVX_LIVE) {
			err = dvx_ht_cache_fini(&r->cache);
			if (err && !first)
				first = err;
		}
		for (j = 0; j < w->n; j++) {
			if (r->ib[j].live == DVX_LIVE) {
				err = dvx_ht_ib_fini(&r->ib[j]);
				if (err && !first)
					first = err;
			}
			free(r->ts[j]);
			free(r->tr[j]);
			free(r->td[j]);
		}
		free(r->cs);
		free(r->cr);
		free(r->cd);
		if (r->smr.live == DVX_LIVE)
			dvx_mr_dereg(&r->smr);
		if (r->rmr.live == DVX_LIVE)
			dvx_mr_dereg(&r->rmr);
		if (r->nic.open == DVX_LIVE) {
			err = dvx_nic_close(&r->nic);
			if (err && !first)
				first = err;
		}
		dvx_bootstrap_fini(&r->bs);
		free(r->sbuf);
		free(r->rbuf);
	}
	if (w->g)
		dvx_bootstrap_tgroup_fini(w->g);
	free(w->bs_mem);
	if (w->procs && w->fab)
		dvx_sim_stop(w->fab);
	err = dvx_test_fabric_fini(w->fab, w->fab_mem, "hworld");
	free(w->wire_mem);
	if (err && !first)
		first = err;
	memset(w, 0, sizeof(*w));
	return first;
}

int hw_end(struct hw *w, int a, int b, const struct dvx_ht_ib_cfg *cfg)
{
	struct hw_rank *r = &w->r[a];
	struct dvx_ht_ib_cfg c = *cfg;
	struct dvx_mem_req s, g, d;
	int err;

	c.nic = &r->nic;
	c.bs = &r->bs;
	c.peer = b;
	/* one tag per pair unless the caller names one (a pair made again after a fini) */
	c.tag = cfg->tag ? cfg->tag : (uint32_t)(a < b ? a * HW_MAX + b : b * HW_MAX + a);
	err = dvx_ht_ib_mem_req(&c, &s, &g, &d);
	if (err)
		return err;
	if (!r->ts[b]) {
		r->ts[b] = hw_alloc(s.bytes, s.align);
		r->tr[b] = hw_alloc(g.bytes, g.align);
		r->td[b] = hw_alloc(d.bytes, d.align);
		if (!r->ts[b] || !r->tr[b] || !r->td[b])
			return -ENOMEM;
	}
	return dvx_ht_ib_init(&r->ib[b], &c, r->ts[b], s.bytes, r->tr[b], g.bytes, r->td[b],
			      d.bytes);
}

int hw_pair(struct hw *w, int a, int b, const struct dvx_ht_ib_cfg *cfg)
{
	int err = hw_end(w, a, b, cfg);

	return err ? err : hw_end(w, b, a, cfg);
}

static void end_free(struct hw_rank *r, int b)
{
	if (r->ib[b].live == DVX_LIVE)
		dvx_ht_ib_fini(&r->ib[b]);
	free(r->ts[b]);
	free(r->tr[b]);
	free(r->td[b]);
	r->ts[b] = r->tr[b] = r->td[b] = NULL;
}

int hw_unpair(struct hw *w, int a, int b)
{
	end_free(&w->r[a], b);
	end_free(&w->r[b], a);
	return 0;
}

struct dvx_ht *hw_t(struct hw *w, int a, int b)
{
	return &w->r[a].ib[b].ht;
}

int hw_connect(struct hw *w, int a, int b, uint64_t timeout_ns)
{
	uint64_t end = hw_now() + timeout_ns;
	int err;

	while (!dvx_ht_connected(hw_t(w, a, b)) || !dvx_ht_connected(hw_t(w, b, a))) {
		err = dvx_ht_progress(hw_t(w, a, b));
		if (!err)
			err = dvx_ht_progress(hw_t(w, b, a));
		if (err)
			return err;
		if (hw_now() > end)
			return -ETIMEDOUT;
	}
	return 0;
}

int hw_caches(struct hw *w, const struct dvx_ht_cache_cfg *cfg)
{
	int i, err;

	for (i = 0; i < w->n; i++) {
		struct hw_rank *r = &w->r[i];
		struct dvx_ht_cache_cfg c = *cfg;
		struct dvx_mem_req s, g, d;

		if (r->nic.open != DVX_LIVE)
			continue;	/* processes: another process's rank */
		c.bs = &r->bs;
		c.tmpl.nic = &r->nic;
		err = dvx_ht_cache_mem_req(&c, &s, &g, &d);
		if (err)
			return err;
		r->cs = hw_alloc(s.bytes, s.align);
		r->cr = hw_alloc(g.bytes, g.align);
		r->cd = hw_alloc(d.bytes, d.align);
		if (!r->cs || !r->cr || !r->cd)
			return -ENOMEM;
		err = dvx_ht_cache_init(&r->cache, &c, r->cs, s.bytes, r->cr, g.bytes, r->cd,
					d.bytes);
		if (err)
			return err;
	}
	return 0;
}

/* a position-dependent pattern that differs per salt: byte i is byte (i & 7) of word
 * i >> 3, written and checked a word at a time */
static uint64_t pat_word(uint64_t w, uint32_t salt)
{
	return (w + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)salt << 32 | salt);
}

void hw_fill(uint8_t *p, uint64_t len, uint32_t salt)
{
	uint64_t i, v;

	for (i = 0; i + 8 <= len; i += 8) {
		v = pat_word(i >> 3, salt);
		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		v = pat_word(i >> 3, salt);
		memcpy(p + i, &v, len - i);
	}
}

int hw_verify(const uint8_t *p, uint64_t len, uint32_t salt, uint64_t *bad_at)
{
	uint64_t i, v, k;

	for (i = 0; i < len; i += 8) {
		k = len - i < 8 ? len - i : 8;
		v = pat_word(i >> 3, salt);
		if (memcmp(p + i, &v, k)) {
			if (bad_at)
				*bad_at = i;
			return -EBADMSG;
		}
	}
	return 0;
}

void hw_progress(struct hw *w)
{
	int i, j;

	for (i = 0; i < w->n; i++) {
		if (w->r[i].cache.live == DVX_LIVE)
			dvx_ht_cache_progress(&w->r[i].cache);
		for (j = 0; j < w->n; j++)
			if (w->r[i].ib[j].live == DVX_LIVE)
				dvx_ht_progress(&w->r[i].ib[j].ht);
	}
}

int hw_wait(struct hw *w, struct dvx_ht_req *q, uint64_t timeout_ns)
{
	uint64_t end = hw_now() + timeout_ns;
	int done, err;

	for (;;) {
		done = 0;
		err = dvx_ht_test(q, &done);
		if (done || err)
			return err;
		hw_progress(w);
		if (hw_now() > end)
			return -ETIMEDOUT;
	}
}

void hw_side_init(struct hw_side *s, struct dvx_ht *t, int send, uint8_t *buf, struct dvx_mr *mr,
		  uint64_t size, uint64_t chunk, uint32_t nch, uint32_t win)
{
	*s = (struct hw_side){ .t = t, .send = send, .buf = buf, .mr = mr, .size = size,
			       .chunk = chunk, .nch = nch,
			       .win = win > HW_WIN ? HW_WIN : (win ? win : HW_WIN),
			       .per = (size + chunk - 1) / chunk };
	s->nchunks = s->per;
}

void hw_side_repeat(struct hw_side *s, uint64_t reps, const struct dvx_ht_rbuf *remote)
{
	s->nchunks = s->per * reps;
	if (remote) {
		s->remote = *remote;
		s->phase = 2;
	}
}

/* chunks channel @c carries */
static uint64_t chan_chunks(const struct hw_side *s, uint32_t c)
{
	return s->nchunks > c ? (s->nchunks - c + s->nch - 1) / s->nch : 0;
}

static int side_fail(struct hw_side *s, int err)
{
	s->err = err;
	return err;
}

/* zero-copy: the receiver exports its buffer, the sender imports it */
static int side_start(struct hw_side *s)
{
	int done = 0, err;

	if (s->phase == 0) {
		if (s->t->mode != DVX_HT_ZC) {
			s->phase = 2;
			return 1;
		}
		if (!dvx_ht_connected(s->t)) {
			err = dvx_ht_progress(s->t);
			return err ? side_fail(s, err) : 0;
		}
		if (s->send) {
			err = dvx_ht_recv_ctrl(s->t, &s->desc, sizeof(s->desc), &s->ctrl);
		} else {
			err = dvx_ht_export(s->t, s->buf, s->size ? s->size : 1, s->mr, &s->desc);
			if (!err)
				err = dvx_ht_send_ctrl(s->t, &s->desc, sizeof(s->desc), &s->ctrl);
		}
		if (err == -EAGAIN)
			return 0;
		if (err)
			return side_fail(s, err);
		s->phase = 1;
	}
	err = dvx_ht_test(&s->ctrl, &done);
	if (!done)
		return 0;
	if (err)
		return side_fail(s, err);
	if (s->send) {
		err = dvx_ht_import(s->t, &s->desc, &s->remote);
		if (err)
			return side_fail(s, err);
	}
	s->phase = 2;
	return 1;
}

int hw_side_step(struct hw_side *s)
{
	uint32_t c;
	int moved = 0, err, done;

	if (s->err)
		return s->err;
	if (s->phase < 2)
		return side_start(s);
	if (s->phase == 3)
		return 0;
	err = dvx_ht_progress(s->t);
	if (err)
		return side_fail(s, err);
	for (c = 0; c < s->nch; c++) {
		uint64_t n = chan_chunks(s, c);

		while (s->issued[c] < n && s->issued[c] - s->done[c] < s->win) {
			uint64_t i = s->issued[c] * s->nch + c, off = (i % s->per) * s->chunk;
			struct dvx_ht_chunk k;

			memset(&k, 0, sizeof(k));
			k.buf = s->buf + off;
			k.len = s->size - off < s->chunk ? s->size - off : s->chunk;
			k.offset = off;
			k.channel = c;
			if (s->t->mode == DVX_HT_ZC && s->send) {
				k.mr = s->mr;
				k.remote = &s->remote;
			}
			err = s->send ? dvx_ht_send_chunk(s->t, &k, &s->req[c][s->issued[c] % s->win]) :
					dvx_ht_recv_chunk(s->t, &k, &s->req[c][s->issued[c] % s->win]);
			if (err == -EAGAIN)
				break;
			if (err)
				return side_fail(s, err);
			s->issued[c]++;
			moved = 1;
		}
		while (s->done[c] < s->issued[c]) {
			struct dvx_ht_req *q = &s->req[c][s->done[c] % s->win];

			done = 0;
			err = dvx_ht_test(q, &done);
			if (!done)
				break;
			if (err)
				return side_fail(s, err);
			s->moved += q->bytes;
			s->done[c]++;
			moved = 1;
		}
	}
	for (c = 0; c < s->nch; c++)
		if (s->done[c] < chan_chunks(s, c))
			return moved;
	s->phase = 3;
	return 1;
}

int hw_run(struct hw_side *const *s, int n, uint64_t timeout_ns)
{
	uint64_t end = hw_now() + timeout_ns;
	int i, left, err;

	for (;;) {
		left = 0;
		for (i = 0; i < n; i++) {
			err = hw_side_step(s[i]);
			if (err < 0)
				return err;
			left += s[i]->phase != 3;
		}
		if (!left)
			return 0;
		if (hw_now() > end)
			return -ETIMEDOUT;
	}
}

static int check_rx(struct hw *w, int a, int b, const struct hw_side *tx,
		    const struct hw_side *rx, uint64_t size, uint32_t salt)
{
	uint64_t bad = 0;
	int err;

	if (tx->moved != size || rx->moved != size) {
		fprintf(stderr, "hworld: %d to %d moved %llu and %llu of %llu bytes\n", a, b,
			(unsigned long long)tx->moved, (unsigned long long)rx->moved,
			(unsigned long long)size);
		return -EMSGSIZE;
	}
	err = hw_verify(w->r[b].rbuf, size, salt, &bad);
	if (err)
		fprintf(stderr, "hworld: %llu bytes from %d to %d differ at %llu\n",
			(unsigned long long)size, a, b, (unsigned long long)bad);
	return err;
}

int hw_xfer(struct hw *w, int a, int b, uint64_t size, uint64_t chunk, uint32_t nch,
	    uint32_t salt)
{
	static struct hw_side tx, rx;
	struct hw_side *s[2] = { &tx, &rx };
	int err;

	hw_fill(w->r[a].sbuf, size, salt);
	memset(w->r[b].rbuf, 0, size);
	hw_side_init(&tx, hw_t(w, a, b), 1, w->r[a].sbuf, &w->r[a].smr, size, chunk, nch, 0);
	hw_side_init(&rx, hw_t(w, b, a), 0, w->r[b].rbuf, &w->r[b].rmr, size, chunk, nch, 0);
	err = hw_run(s, 2, 120 * HW_SEC);
	return err ? err : check_rx(w, a, b, &tx, &rx, size, salt);
}

int hw_xfer2(struct hw *w, int a, int b, uint64_t size, uint64_t chunk, uint32_t nch,
	     uint32_t salt)
{
	static struct hw_side tx[2], rx[2];
	struct hw_side *s[4] = { &tx[0], &rx[0], &tx[1], &rx[1] };
	int i, err;

	for (i = 0; i < 2; i++) {
		int from = i ? b : a, to = i ? a : b;

		hw_fill(w->r[from].sbuf, size, salt + (uint32_t)i);
		memset(w->r[to].rbuf, 0, size);
		hw_side_init(&tx[i], hw_t(w, from, to), 1, w->r[from].sbuf, &w->r[from].smr, size,
			     chunk, nch, 0);
		hw_side_init(&rx[i], hw_t(w, to, from), 0, w->r[to].rbuf, &w->r[to].rmr, size,
			     chunk, nch, 0);
	}
	err = hw_run(s, 4, 120 * HW_SEC);
	if (!err)
		err = check_rx(w, a, b, &tx[0], &rx[0], size, salt);
	if (!err)
		err = check_rx(w, b, a, &tx[1], &rx[1], size, salt + 1);
	return err;
}

/* ---- ranks as processes ------------------------------------------------------------ */

/* the MPI job's first context, started by dvx and finished at exit */
static struct dvx_bootstrap hw_mpi_root;
static uint64_t hw_mpi_mem[DVX_BOOTSTRAP_MPI_MEM_SIZE(HW_MAX * 4) / 8];
static int hw_mpi_up;

static void hw_mpi_exit(void)
{
	dvx_bootstrap_fini(&hw_mpi_root);
}

/* this process's bootstrap: the sockets adapter at @bsaddr as rank w->me, or with
 * @bsaddr NULL a duplicate of the MPI job's context (w->me set to the job's rank) */
static int proc_bootstrap(struct hw *w, const char *bsaddr)
{
	struct dvx_bootstrap_sock_cfg ba;
	size_t len = dvx_bootstrap_sock_mem_size(w->n, HW_SLOTS, 4096);

	if (!bsaddr) {
		struct dvx_bootstrap_mpi_cfg ma = { .flags = DVX_BOOTSTRAP_MPI_F_INIT };
		int err = hw_mpi_up ? 0 : dvx_bootstrap_mpi_init(&hw_mpi_root, &ma, hw_mpi_mem,
								  sizeof(hw_mpi_mem));

		if (err)
			return err;
		if (!hw_mpi_up)
			atexit(hw_mpi_exit);
		hw_mpi_up = 1;
		if (dvx_bootstrap_nranks(&hw_mpi_root) != w->n)
			return -ERANGE;
		w->me = dvx_bootstrap_rank(&hw_mpi_root);
		return dvx_bootstrap_dup(&hw_mpi_root, &w->r[w->me].bs);
	}
	memset(&ba, 0, sizeof(ba));
	ba.addr = bsaddr;
	ba.rank = w->me;
	ba.nranks = w->n;
	ba.max_unexpected = HW_SLOTS;
	ba.slot_bytes = 4096;
	ba.timeout_ns = 60 * HW_SEC;
	w->bs_mem = hw_alloc(len, 64);
	return w->bs_mem ? dvx_bootstrap_sock_init(&w->r[w->me].bs, &ba, w->bs_mem, len) :
			   -ENOMEM;
}

int hw_init_proc(struct hw *w, int n, int me, uint64_t buf_len, const char *bsaddr)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_bootstrap_wire_cfg wa;
	struct hw_rank *r;
	size_t wsz;
	int err;

	memset(w, 0, sizeof(*w));
	if (n < 2 || n > HW_MAX)
		return -EINVAL;
	w->n = n;
	w->me = me;
	w->procs = 1;
	w->buf_len = buf_len;
	err = proc_bootstrap(w, bsaddr);
	if (err)
		return err;
	r = &w->r[w->me];
	/* this process's fabric holds its own NIC; the wire reaches the others' */
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_qps = 64;
	fc.max_cqs = fc.max_mrs = fc.max_umems = 32;
	err = dvx_test_fabric(&fc, w->me, 1, &w->fab_mem, &w->fab);
	if (err)
		return err;
	memset(&wa, 0, sizeof(wa));
	wa.fab = w->fab;
	wsz = dvx_bootstrap_wire_mem_size(n, 0);
	w->wire_mem = malloc(wsz);
	if (!w->wire_mem)
		return -ENOMEM;
	err = dvx_bootstrap_wire_join(&r->bs, &wa, w->wire_mem, wsz, 60 * HW_SEC);
	/* a rank blocked in its bootstrap still answers the others' requests */
	if (!err)
		err = dvx_sim_start(w->fab);
	if (!err) {
		char name[16];

		snprintf(name, sizeof(name), "sim_%d", w->me);
		err = rank_up_nic(w, w->me, dvx_sim_hal(w->fab), name);
	}
	return err;
}

/* ---- every rank to every other, through the caches --------------------------------- */

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

uint32_t hw_pair_mode(int a, int b)
{
	return (a + b) % 2 ? DVX_HT_ZC : DVX_HT_CB;
}

/* rank @me's peers in a random order; for each, its transport and then its handshake,
 * before the next is asked for */
static int ask_all(struct hw *w, int me, uint64_t seed, char *why, size_t n)
{
	struct hw_rank *r = &w->r[me];
	uint64_t s = seed * 977 + (uint64_t)me, end;
	int order[HW_MAX], i, k, err;

	for (i = 0, k = 0; i < w->n; i++)
		if (i != me)
			order[k++] = i;
	for (i = k - 1; i > 0; i--) {
		int j = (int)(rnd(&s) % (uint64_t)(i + 1)), x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	for (i = 0; i < k; i++) {
		struct dvx_ht *t;

		err = dvx_ht_cache_get(&r->cache, order[i], hw_pair_mode(me, order[i]), &t);
		if (err) {
			snprintf(why, n, "get(%d): %d%s", order[i], err,
				 err == -EEXIST ? " (the other mode was cached)" : "");
			return err;
		}
		end = hw_now() + 60 * HW_SEC;
		while (!dvx_ht_connected(t)) {
			err = dvx_ht_wait_connected(t, 1000000);
			if ((err && err != -ETIMEDOUT) || hw_now() > end) {
				snprintf(why, n, "peer %d: the handshake: %d", order[i],
					 err ? err : -ETIMEDOUT);
				return err ? err : -ETIMEDOUT;
			}
			sched_yield();
		}
	}
	return 0;
}

int hw_all_to_all(struct hw *w, int me, uint64_t size, uint64_t seed, char *why, size_t n)
{
	struct hw_rank *r = &w->r[me];
	struct hw_side *sides[2 * HW_MAX], *x;
	uint64_t end;
	int i, k = 0, err;

	err = ask_all(w, me, seed, why, n);
	if (err)
		return err;
	x = calloc(2 * HW_MAX, sizeof(*x));
	if (!x)
		return -ENOMEM;
	/* everyone sends to everyone, and receives from everyone, at once; the receive
	 * buffer is cut in slices, one per sender */
	hw_fill(r->sbuf, size, (uint32_t)me);
	for (i = 0; i < w->n; i++) {
		struct dvx_ht *t = dvx_ht_cache_lookup(&r->cache, i);
		uint64_t chunk = hw_pair_mode(me, i) == DVX_HT_ZC ? 32768 : 8192;

		if (i == me)
			continue;
		hw_side_init(&x[k], t, 1, r->sbuf, &r->smr, size, chunk, 2, 4);
		sides[k] = &x[k];
		k++;
		hw_side_init(&x[k], t, 0, r->rbuf + (uint64_t)i * size, &r->rmr, size, chunk, 2, 4);
		sides[k] = &x[k];
		k++;
	}
	end = hw_now() + 120 * HW_SEC;
	while (!err) {
		int left = 0, moved = 0;

		for (i = 0; i < k && !err; i++) {
			err = hw_side_step(sides[i]);
			moved |= err > 0;
			err = err < 0 ? err : 0;
			left += sides[i]->phase != 3;
		}
		if (err)
			snprintf(why, n, "transfer: %d", err);
		if (err || !left)
			break;
		if (hw_now() > end) {
			snprintf(why, n, "the transfers timed out");
			err = -ETIMEDOUT;
		}
		if (!moved)
			sched_yield();	/* 2 cores, up to 8 ranks */
	}
	for (i = 0; i < w->n && !err; i++)
		if (i != me && hw_verify(r->rbuf + (uint64_t)i * size, size, (uint32_t)i, NULL)) {
			snprintf(why, n, "the bytes from %d differ", i);
			err = -EBADMSG;
		}
	free(x);
	return err;
}
