// SPDX-License-Identifier: MIT
/*
 * tests/msg/mworld.c - see mworld.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mworld.h"

uint64_t mw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * MW_SEC + (uint64_t)ts.tv_nsec;
}

static void *mw_alloc(uint64_t len, uint64_t align)
{
	void *p = NULL;

	if (posix_memalign(&p, align < 64 ? 64 : align, len ? len : 64))
		return NULL;
	return p;
}

static int rank_up(struct mw *w, int i)
{
	struct mw_rank *r = &w->r[i];
	struct dvx_nic_cfg na;
	struct dvx_msg_cfg c = w->cfg;
	struct dvx_mem_req s, f, g;
	struct dvx_mr_cfg ma;
	char name[16];
	int err;

	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", i);
	na.name = name;
	err = dvx_nic_open(&r->nic, dvx_sim_hal(w->fab), &na);
	if (err)
		return err;
	c.nnics = 1;
	c.nics[0] = &r->nic;
	err = dvx_msg_mem_req(&c, &s, &f, &g);
	if (err)
		return err;
	r->state_len = s.bytes;
	r->fifo_len = f.bytes;
	r->rings_len = g.bytes;
	r->state = mw_alloc(s.bytes, s.align);
	r->fifo = mw_alloc(f.bytes, f.align);
	r->rings = mw_alloc(g.bytes, g.align);
	r->buf = mw_alloc(w->buf_len, 4096);
	if (!r->state || !r->fifo || !r->rings || !r->buf)
		return -ENOMEM;
	memset(r->buf, 0, w->buf_len);
	err = dvx_msg_init(&r->m, &c, r->state, s.bytes, r->fifo, f.bytes, r->rings, g.bytes);
	if (err)
		return err;
	memset(&ma, 0, sizeof(ma));
	ma.addr = r->buf;
	ma.len = w->buf_len;
	return dvx_msg_reg_mr(&r->m, 0, &ma, &r->mr);
}

int mw_fifo_only;
const struct dvx_sim_fabric_cfg *mw_fab_cfg;

int mw_init(struct mw *w, int n, const struct dvx_msg_cfg *cfg, uint64_t buf_len, int threaded)
{
	struct dvx_sim_fabric_cfg fc;
	size_t fsz;
	int i, err;

	memset(w, 0, sizeof(*w));
	if (n < 1 || n > MW_MAX)
		return -EINVAL;
	w->n = n;
	w->buf_len = buf_len;
	w->threaded = threaded;
	if (cfg)
		w->cfg = *cfg;
	/* DVX_MSG_TEST_OFFLOAD=1: every context asks for the CTS receiver offload, but in
	 * the cases that test the FIFO clear-to-send itself (mw_fifo_only) */
	if (!mw_fifo_only && getenv("DVX_MSG_TEST_OFFLOAD") &&
	    atoi(getenv("DVX_MSG_TEST_OFFLOAD")))
		w->cfg.flags |= DVX_MSG_F_CTS_OFFLOAD;
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = (uint32_t)n;
	fc.max_qps = 1200;
	fc.max_cqs = 1200;
	fc.max_mrs = 64;
	fc.max_umems = 16;
	if (mw_fab_cfg) {
		fc = *mw_fab_cfg;
		fc.max_nics = (uint32_t)n;
	}
	fsz = dvx_sim_fabric_mem_size(&fc);
	w->fab_mem = calloc(1, fsz);
	w->fab_len = fsz;
	if (!w->fab_mem)
		return -ENOMEM;
	err = dvx_sim_fabric_init(w->fab_mem, fsz, &fc, &w->fab);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct dvx_sim_nic_cfg nc;

		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		if (dvx_sim_add_nic(w->fab, &nc) < 0)
			return -ENOSPC;
	}
	for (i = 0; i < n; i++) {
		err = rank_up(w, i);
		if (err)
			return err;
	}
	if (threaded)
		return dvx_sim_start(w->fab);
	return 0;
}

int mw_fini(struct mw *w)
{
	struct dvx_sim_stats s;
	int i, err, first = 0;

	if (w->threaded && w->fab)
		dvx_sim_stop(w->fab);
	for (i = 0; i < w->n; i++) {
		struct mw_rank *r = &w->r[i];

		if (r->mr.live == DVX_LIVE) {
			err = dvx_msg_dereg_mr(&r->m, &r->mr);
			if (err && !first)
				first = err;
		}
		if (r->m.live == DVX_LIVE) {
			err = dvx_msg_fini(&r->m);
			if (err && !first)
				first = err;
		}
		if (r->nic.open == DVX_LIVE) {
			err = dvx_nic_close(&r->nic);
			if (err && !first)
				first = err;
		}
		free(r->state);
		free(r->fifo);
		free(r->rings);
		free(r->buf);
	}
	if (w->fab) {
		memset(&s, 0, sizeof(s));
		dvx_sim_get_stats(w->fab, &s);
		for (i = 0; i < 8; i++)
			if (s.live[i] && !first) {
				fprintf(stderr, "mworld: the sim still holds %u objects of kind %d\n",
					(unsigned)s.live[i], i);
				first = -EBUSY;
			}
		err = dvx_sim_fini(w->fab);
		if (err && !first)
			first = err;
	}
	free(w->fab_mem);
	memset(w, 0, sizeof(*w));
	return first;
}

void mw_progress(struct mw *w)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (w->r[i].m.live == DVX_LIVE)
			dvx_msg_progress(&w->r[i].m);
}

int mw_pair(struct mw *w, int a, int b, uint32_t nqps, struct dvx_msg_comm **send,
	    struct dvx_msg_comm **recv)
{
	struct dvx_msg_handle h;
	struct dvx_msg_comm *l;
	uint64_t end = mw_now() + 10 * MW_SEC;
	int err;

	*send = *recv = NULL;
	err = dvx_msg_listen(&w->r[b].m, 0, &h, &l);
	if (err)
		return err;
	while (!*send || !*recv) {
		if (!*send) {
			err = dvx_msg_connect(&w->r[a].m, 0, nqps, &h, send);
			if (err)
				break;
		}
		if (!*recv) {
			err = dvx_msg_accept(l, recv);
			if (err)
				break;
		}
		if (mw_now() > end) {
			err = -ETIMEDOUT;
			break;
		}
	}
	dvx_msg_close(l);
	return err;
}

int mw_wait(struct mw *w, struct dvx_msg_req *q, size_t *sizes, uint64_t timeout_ns)
{
	uint64_t end = mw_now() + timeout_ns;
	int done = 0, err;

	for (;;) {
		err = dvx_msg_test(q, &done, sizes);
		if (done || err)
			return err;
		if (w && !w->threaded)
			mw_progress(w);
		if (mw_now() > end)
			return -ETIMEDOUT;
	}
}

int mw_isend(struct mw *w, struct dvx_msg_comm *c, const void *buf, size_t size, uint32_t tag,
	     const struct dvx_mr *mr, struct dvx_msg_req **q, uint64_t timeout_ns)
{
	uint64_t end = mw_now() + timeout_ns;
	int err;

	for (;;) {
		err = dvx_msg_isend(c, buf, size, tag, mr, q);
		if (err || *q)
			return err;
		if (w && !w->threaded)
			mw_progress(w);
		if (mw_now() > end)
			return -ETIMEDOUT;
	}
}

int mw_irecv(struct mw *w, struct dvx_msg_comm *c, int n, void *const *bufs, const size_t *sizes,
	     const uint32_t *tags, struct dvx_mr *const *mrs, struct dvx_msg_req **q,
	     uint64_t timeout_ns)
{
	uint64_t end = mw_now() + timeout_ns;
	int err;

	for (;;) {
		err = dvx_msg_irecv(c, n, bufs, sizes, tags, mrs, q);
		if (err || *q)
			return err;
		if (w && !w->threaded)
			mw_progress(w);
		if (mw_now() > end)
			return -ETIMEDOUT;
	}
}

int mw_check(struct mw *w)
{
	int i, err;

	for (i = 0; i < w->n; i++) {
		const char *why = NULL;

		if (w->r[i].m.live != DVX_LIVE)
			continue;
		err = dvx_msg_check(&w->r[i].m, &why);
		if (err) {
			fprintf(stderr, "mworld: rank %d: %s\n", i, why ? why : "?");
			return err;
		}
	}
	return 0;
}

int mw_settle(struct mw *w)
{
	uint64_t end = mw_now() + 10 * MW_SEC;
	int i, left;

	do {
		left = 0;
		mw_progress(w);
		for (i = 0; i < w->n; i++) {
			struct dvx_msg_stats st;

			dvx_msg_get_stats(&w->r[i].m, &st);
			left += (int)st.closing;
		}
		if (!left)
			return 0;
	} while (mw_now() < end);
	return -ETIMEDOUT;
}

uint8_t mw_pat(uint32_t seed, uint64_t i)
{
	return (uint8_t)(seed * 131u + i * 7u + (i >> 9) + 1u);
}

void mw_fill(uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = mw_pat(seed, i);
}

int64_t mw_verify(const uint8_t *p, uint64_t len, uint32_t seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != mw_pat(seed, i))
			return (int64_t)i;
	return -1;
}
