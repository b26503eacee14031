// SPDX-License-Identifier: MIT
/*
 * tests/soak/soak_rejoin.c - the killed rank, started again, rejoins the messaging layer
 * (soak_rejoin.h). The layer is the one that can take it: a connection is made from a
 * handle alone, and the wire admits a rank whose connection ended. The new process
 * listens on the wire (the survivors' mesh listeners are closed, so they join it) and
 * has no bootstrap (the group marked the rank gone for good), so the two sides meet
 * through files in the run's folder: each survivor leaves its listen handle, the new
 * process its handle and its wire address. Each side then connects to the other's
 * handle (a send comm each way), the survivor says its rank on its send comm first,
 * and every round a message goes each way, its length and bytes from (sender,
 * receiver, round), checked at the receiver.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "soak_rejoin.h"

#include <dvx/hal/sim.h>

#define RJ_MAGIC 0x524a4f4eu	/* "RJON" */
#define RJ_WAIT (60 * W_SEC)
#define RJ_ID_TAG 0xffffeu
#define RJ_LAYER 0x52000000u	/* the pattern's round bits for this phase */

/* what one side leaves for the other */
struct rj_rec {
	uint32_t magic;
	int32_t rank;
	struct dvx_msg_handle h;
	char wire[DVX_SIM_WIRE_ADDR_MAX];	/* the restarted rank's; empty for a survivor */
};

static struct {
	uint32_t rounds;
	uint64_t maxlen;
} rj_cfg = { 16, 4096 };

void soak_rejoin_setup(uint32_t rounds, uint64_t maxlen)
{
	rj_cfg.rounds = rounds;
	rj_cfg.maxlen = maxlen;
}

static uint64_t rj_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * W_SEC + (uint64_t)ts.tv_nsec;
}

/* a message's length, 0 ... maxlen */
static uint64_t rj_len(int from, int to, uint32_t k)
{
	uint64_t x = ((uint64_t)from << 40 | (uint64_t)to << 32 | k) * 0x9E3779B97F4A7C15ull;

	x ^= x >> 31;
	return x % (rj_cfg.maxlen + 1);
}

/* leave @rec for the other side: written whole, then renamed into place */
static int rj_put(struct wrank *r, const struct rj_rec *rec)
{
	char path[160], tmp[170], name[16];
	int fd, ok;

	snprintf(name, sizeof(name), "%d", rec->rank);
	world_rejoin_path(r, name, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	ok = write(fd, rec, sizeof(*rec)) == (ssize_t)sizeof(*rec);
	close(fd);
	if (!ok || rename(tmp, path))
		return -EIO;
	return 0;
}

/* what rank @rank left, waited for (bounded) */
static int rj_get(struct wrank *r, int rank, struct rj_rec *rec, void (*progress)(void *),
		  void *arg)
{
	uint64_t end = rj_now() + RJ_WAIT;
	char path[160], name[16];

	snprintf(name, sizeof(name), "%d", rank);
	world_rejoin_path(r, name, path, sizeof(path));
	for (;;) {
		int fd = open(path, O_RDONLY);

		if (fd >= 0) {
			ssize_t n = read(fd, rec, sizeof(*rec));

			close(fd);
			if (n != (ssize_t)sizeof(*rec) || rec->magic != RJ_MAGIC || rec->rank != rank)
				return -EPROTO;
			rec->wire[sizeof(rec->wire) - 1] = 0;
			return 0;
		}
		if (rj_now() >= end)
			return -ETIMEDOUT;
		if (progress)
			progress(arg);
		usleep(1000);
	}
}

static void rj_fill(uint8_t *p, int from, int to, uint32_t k, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = wpat(from, to, RJ_LAYER | k, i);
}

/* the first wrong byte, or -1 */
static int64_t rj_bad(const uint8_t *p, int from, int to, uint32_t k, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != wpat(from, to, RJ_LAYER | k, i))
			return (int64_t)i;
	return -1;
}

/* one request of @m to its end: posted (retried while the layer says "later"), done */
struct rj_io {
	struct dvx_msg_req *q;
	int done;
	size_t size;
};

static int rj_wait(struct rj_io *io, int n, struct dvx_msg *m, void (*progress)(void *),
		   void *arg)
{
	uint64_t end = rj_now() + RJ_WAIT;
	int i, left = n, e;

	while (left) {
		for (i = 0; i < n; i++) {
			if (io[i].done)
				continue;
			e = dvx_msg_test(io[i].q, &io[i].done, &io[i].size);
			if (e)
				return e;
			left -= io[i].done;
		}
		if (rj_now() >= end)
			return -ETIMEDOUT;
		dvx_msg_progress(m);
		if (progress)
			progress(arg);
	}
	return 0;
}

/* an isend (@recv 0) or a one-buffer irecv (@recv 1) of @len bytes at @buf, posted
 * again while the layer says "later" (bounded) */
static int rj_post(struct dvx_msg *m, struct dvx_msg_comm *c, void *buf, size_t len,
		   uint32_t tag, struct dvx_mr *mr, int recv, struct rj_io *io)
{
	uint64_t end = rj_now() + RJ_WAIT;
	void *bufs[1] = { buf };
	int e;

	memset(io, 0, sizeof(*io));
	while (!io->q) {
		e = recv ? dvx_msg_irecv(c, 1, bufs, &len, &tag, &mr, &io->q) :
			   dvx_msg_isend(c, buf, len, tag, mr, &io->q);
		if (e)
			return e;
		if (!io->q && rj_now() >= end)
			return -ETIMEDOUT;
		dvx_msg_progress(m);
	}
	return 0;
}

/* the rounds with one peer @p: a receive into @rb and a send from @sb each round */
static void rj_rounds(struct wrank *r, struct dvx_msg *m, int p, struct dvx_msg_comm *snd,
		      struct dvx_msg_comm *rcv, uint8_t *sb, uint8_t *rb, struct dvx_mr *mr,
		      void (*progress)(void *), void *arg, uint64_t *ops, uint64_t *bytes)
{
	uint32_t k;

	for (k = 0; k < rj_cfg.rounds; k++) {
		uint64_t slen = rj_len(r->rank, p, k), rlen = rj_len(p, r->rank, k);
		struct rj_io io[2];
		int64_t bad;

		rj_fill(sb, r->rank, p, k, slen);
		memset(rb, 0xee, rj_cfg.maxlen);
		W_OK(r, rj_post(m, rcv, rb, rj_cfg.maxlen, k, mr, 1, &io[0]));
		W_OK(r, rj_post(m, snd, sb, slen, k, mr, 0, &io[1]));
		W_OK(r, rj_wait(io, 2, m, progress, arg));
		W_CHECK(r, io[0].size == rlen && io[1].size == slen,
			"round %u with rank %d: received %zu (want %llu), sent %zu", k, p,
			io[0].size, (unsigned long long)rlen, io[1].size);
		bad = rj_bad(rb, p, r->rank, k, rlen);
		W_CHECK(r, bad < 0, "round %u from rank %d: byte %lld wrong", k, p, (long long)bad);
		*ops += 2;
		*bytes += slen + rlen;
	}
}

/* a connect to @h and an accept on @lc, until both are made */
static void rj_connect(struct wrank *r, struct dvx_msg *m, struct dvx_msg_handle *h,
		       struct dvx_msg_comm *lc, struct dvx_msg_comm **snd,
		       struct dvx_msg_comm **rcv, void (*progress)(void *), void *arg)
{
	uint64_t end = rj_now() + RJ_WAIT;

	while (!*snd || (rcv && !*rcv)) {
		W_CHECK(r, rj_now() < end, "rejoin: connections (send %d, recv %d)", !!*snd,
			rcv ? !!*rcv : 1);
		if (!*snd)
			W_OK(r, dvx_msg_connect(m, 0, 0, h, snd));
		if (rcv && !*rcv)
			W_OK(r, dvx_msg_accept(lc, rcv));
		dvx_msg_progress(m);
		if (progress)
			progress(arg);
	}
}

void soak_rejoin_survivor(struct wrank *r, struct dvx_msg *m, int victim,
			  void (*progress)(void *arg), void *arg, uint64_t *ops, uint64_t *bytes)
{
	struct dvx_msg_comm *lc = NULL, *snd = NULL, *rcv = NULL;
	struct dvx_hal_sock_addr at;
	struct dvx_msg_stats ms;
	struct rj_rec me, v;
	uint32_t comms0, t;
	int e;
	struct dvx_mr_cfg ma;
	struct dvx_mr mr;
	struct rj_io io;
	uint64_t len = 2 * rj_cfg.maxlen + 64;
	uint8_t *buf = aligned_alloc(4096, (len + 4095) & ~4095ull);
	uint32_t id = (uint32_t)r->rank;

	W_CHECK(r, buf, "out of memory");
	dvx_msg_get_stats(m, &ms);
	comms0 = ms.comms;
	memset(&ma, 0, sizeof(ma));
	ma.addr = buf;
	ma.len = len;
	memset(&mr, 0, sizeof(mr));
	if (dvx_msg_reg_mr(m, 0, &ma, &mr)) {
		free(buf);
		W_CHECK(r, 0, "rejoin: the MR");
	}
	memset(&me, 0, sizeof(me));
	me.magic = RJ_MAGIC;
	me.rank = r->rank;
	if (dvx_msg_listen(m, 0, &me.h, &lc) || rj_put(r, &me) ||
	    rj_get(r, victim, &v, progress, arg) || dvx_sim_wire_addr_parse(v.wire, &at) ||
	    dvx_sim_wire_connect_peer(wfab(r), victim, &at, RJ_WAIT)) {
		wfail(r, __LINE__, -EIO, "rejoin: rank %d's handle and wire", victim);
		goto out;
	}
	rj_connect(r, m, &v.h, lc, &snd, &rcv, progress, arg);
	if (r->fail_line)
		goto out;
	memcpy(buf, &id, 4);	/* who is at this end of the new rank's recv comm */
	e = rj_post(m, snd, buf, 4, RJ_ID_TAG, &mr, 0, &io);
	if (!e)
		e = rj_wait(&io, 1, m, progress, arg);
	if (e) {
		wfail(r, __LINE__, e, "rejoin: this rank's id to rank %d: %d", victim, e);
		goto out;
	}
	rj_rounds(r, m, victim, snd, rcv, buf, buf + rj_cfg.maxlen + 32, &mr, progress, arg,
		  ops, bytes);
out:
	if (snd)
		dvx_msg_close(snd);
	if (rcv)
		dvx_msg_close(rcv);
	if (lc)
		dvx_msg_close(lc);
	/* the closes finish with the new rank (its close markers) */
	for (t = 0; t < 10000; t++) {
		dvx_msg_get_stats(m, &ms);
		if (ms.comms <= comms0)
			break;
		dvx_msg_progress(m);
		if (progress)
			progress(arg);
		usleep(1000);
	}
	if (r->fail_line)
		return;	/* a receive it announced may still be written: the buffer stays */
	dvx_msg_dereg_mr(m, &mr);
	free(buf);
}

void soak_rejoin_restarted(struct wrank *r)
{
	int n = r->w->cfg.nranks, me = r->rank, p, i, nacc = 0;
	struct dvx_msg_comm *lc = NULL, *snd[W_MAX_RANKS] = { 0 }, *rcv[W_MAX_RANKS] = { 0 };
	struct dvx_msg_comm *acc[W_MAX_RANKS] = { 0 };
	struct rj_rec rec, peer[W_MAX_RANKS];
	struct dvx_mem_req a, b, d;
	struct dvx_msg_cfg c;
	struct dvx_mr_cfg ma;
	struct dvx_mr mr;
	struct rj_io io[W_MAX_RANKS];
	static struct dvx_msg m;
	uint64_t slot = 2 * rj_cfg.maxlen + 64, len = slot * (uint64_t)n + 64, ops = 0, bytes = 0;
	uint64_t end;
	void *st = NULL, *fifo = NULL, *rings = NULL;
	uint8_t *buf = NULL;
	uint32_t *ids;
	int up = 0, e;

	memset(&c, 0, sizeof(c));
	c.nnics = 1;
	c.nics[0] = &r->nic;
	c.max_comms = (uint32_t)(4 * n + 4);
	c.max_reqs = 4;
	c.max_recvs = 1;
	c.groups = 1;		/* as the survivors' */
	c.max_shared_sets = (uint32_t)n;
	c.max_private_sets = 2 * (uint32_t)n;
	c.timeout_ns = RJ_WAIT;
	W_OK(r, dvx_msg_mem_req(&c, &a, &b, &d));
	st = aligned_alloc(a.align < 64 ? 64 : a.align, (a.bytes + 4095) & ~4095ull);
	fifo = aligned_alloc(b.align < 64 ? 64 : b.align, (b.bytes + 4095) & ~4095ull);
	rings = aligned_alloc(d.align < 64 ? 64 : d.align, (d.bytes + 4095) & ~4095ull);
	buf = aligned_alloc(4096, (len + 4095) & ~4095ull);
	if (!st || !fifo || !rings || !buf) {
		wfail(r, __LINE__, -ENOMEM, "out of memory");
		goto out;
	}
	memset(st, 0, a.bytes);
	memset(fifo, 0, b.bytes);
	memset(rings, 0, d.bytes);
	if (dvx_msg_init(&m, &c, st, a.bytes, fifo, b.bytes, rings, d.bytes)) {
		wfail(r, __LINE__, -EIO, "rejoin: the messaging layer");
		goto out;
	}
	up = 1;
	memset(&ma, 0, sizeof(ma));
	ma.addr = buf;
	ma.len = len;
	memset(&mr, 0, sizeof(mr));
	memset(&rec, 0, sizeof(rec));
	rec.magic = RJ_MAGIC;
	rec.rank = me;
	if (dvx_msg_reg_mr(&m, 0, &ma, &mr) || dvx_msg_listen(&m, 0, &rec.h, &lc) ||
	    dvx_sim_wire_addr(wfab(r), rec.wire, sizeof(rec.wire)) || rj_put(r, &rec)) {
		wfail(r, __LINE__, -EIO, "rejoin: listen and say where");
		goto out;
	}
	for (p = 0; p < n; p++) {
		if (p == me)
			continue;
		if (rj_get(r, p, &peer[p], NULL, NULL)) {
			wfail(r, __LINE__, -ETIMEDOUT, "rejoin: rank %d's handle", p);
			goto out;
		}
	}
	/* a send comm to every survivor; their connects to this rank's handle accepted */
	end = rj_now() + RJ_WAIT;
	for (;;) {
		int need = 0;

		for (p = 0; p < n; p++) {
			if (p == me || snd[p])
				continue;
			if (dvx_msg_connect(&m, 0, 0, &peer[p].h, &snd[p])) {
				wfail(r, __LINE__, -EIO, "rejoin: connect to rank %d", p);
				goto out;
			}
			need += !snd[p];
		}
		if (nacc < n - 1) {
			if (dvx_msg_accept(lc, &acc[nacc])) {
				wfail(r, __LINE__, -EIO, "rejoin: accept");
				goto out;
			}
			nacc += !!acc[nacc];
		}
		if (!need && nacc == n - 1)
			break;
		if (rj_now() >= end) {
			wfail(r, __LINE__, -ETIMEDOUT, "rejoin: %d accepted, %d connects left", nacc,
			      need);
			goto out;
		}
		dvx_msg_progress(&m);
	}
	/* who is at the other end of each accepted comm: its first message says (into
	 * the registered buffer's last bytes) */
	ids = (uint32_t *)(void *)(buf + slot * (uint64_t)n);
	for (i = 0, e = 0; i < nacc && !e; i++)
		e = rj_post(&m, acc[i], &ids[i], 4, RJ_ID_TAG, &mr, 1, &io[i]);
	if (!e)
		e = rj_wait(io, nacc, &m, NULL, NULL);
	if (e) {
		wfail(r, __LINE__, e, "rejoin: the survivors' ids: %d", e);
		goto out;
	}
	for (i = 0; i < nacc; i++) {
		if (ids[i] >= (uint32_t)n || (int)ids[i] == me || rcv[ids[i]]) {
			wfail(r, __LINE__, -EPROTO, "rejoin: accepted comm %d says rank %u", i,
			      ids[i]);
			goto out;
		}
		rcv[ids[i]] = acc[i];
		acc[i] = NULL;
	}
	for (p = 0; p < n && !r->fail_line; p++)
		if (p != me)
			rj_rounds(r, &m, p, snd[p], rcv[p], buf + (uint64_t)p * slot,
				  buf + (uint64_t)p * slot + rj_cfg.maxlen + 32, &mr, NULL, NULL,
				  &ops, &bytes);
	if (!r->fail_line)
		printf("soak-procs: rank %d started again: rejoined the messaging layer of the %d "
		       "survivors (their wires joined it, comms made from handles alone), %llu "
		       "messages (%llu bytes) checked\n", me, n - 1, (unsigned long long)ops,
		       (unsigned long long)bytes);
out:
	for (p = 0; p < n; p++) {
		if (snd[p])
			dvx_msg_close(snd[p]);
		if (rcv[p])
			dvx_msg_close(rcv[p]);
		if (acc[p])
			dvx_msg_close(acc[p]);
	}
	if (lc)
		dvx_msg_close(lc);
	if (up) {
		struct dvx_msg_stats ms;

		/* the closes finish with the survivors (their close markers), then the rest */
		for (i = 0; i < 10000; i++) {
			dvx_msg_get_stats(&m, &ms);
			if (!ms.comms)
				break;
			dvx_msg_progress(&m);
			usleep(1000);
		}
		dvx_msg_dereg_mr(&m, &mr);
		dvx_msg_fini(&m);
	}
	free(st);
	free(fifo);
	free(rings);
	free(buf);
}
