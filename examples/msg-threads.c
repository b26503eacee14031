// SPDX-License-Identifier: MIT
/*
 * examples/msg-threads.c - host messaging with the QP sharing pool (dvx/msg/msg.h),
 * the calls a collective library's network plugin makes: rank 1 listens, rank 0
 * connects four communicators to it (which share the QPs of two groups), rank 1 posts a
 * receive of two tagged buffers on each, rank 0 sends into them, both test until done,
 * and rank 1 checks every byte. Each rank is a thread with its own (software) NIC and
 * its own context; the listen handles go from rank 1 to rank 0 through memory here
 * (through your bootstrap or launcher otherwise).
 *
 *   cc msg-threads.c $(pkg-config --cflags --libs dvx) -o msg-threads && ./msg-threads
 *
 * Every call returns 0 or a negative errno (docs/errors.md); connect, accept, isend and
 * irecv that cannot proceed yet return 0 with a NULL result: call them again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dvx/msg/msg.h>
#include <dvx/hal/sim.h>

#define NCOMM 4
#define LEN 100000
#define SEC 1000000000ull

static struct dvx_sim_fabric *fab;
static struct dvx_msg_handle handles[NCOMM];	/* rank 1's listen handles, for rank 0 */
static pthread_barrier_t bar;

struct rank {
	int rank;
	int err;
	pthread_t thread;
};

static uint8_t pattern(int comm, int buf, uint32_t i)
{
	return (uint8_t)(comm * 61 + buf * 17 + i * 7 + 1);
}

/* test @q until it is done; the context progresses meanwhile (every test does) */
static int wait_req(struct dvx_msg_req *q, size_t *sizes)
{
	int done = 0, err;

	do
		err = dvx_msg_test(q, &done, sizes);
	while (!err && !done);
	return err;
}

static int run(int me)
{
	struct dvx_nic nic;
	struct dvx_nic_cfg na;
	struct dvx_msg m;
	struct dvx_msg_cfg c;
	struct dvx_mem_req sreq, freq, rreq;
	struct dvx_mr mr;
	struct dvx_mr_cfg ma;
	struct dvx_msg_comm *listen[NCOMM], *comm[NCOMM];
	struct dvx_msg_req *req[NCOMM][2];
	struct dvx_msg_stats st;
	void *state = NULL, *fifo = NULL, *rings = NULL;
	uint8_t *buf = NULL;
	char name[16];
	int k, b, left, err;

	memset(&nic, 0, sizeof(nic));
	memset(&m, 0, sizeof(m));
	memset(&mr, 0, sizeof(mr));
	memset(comm, 0, sizeof(comm));
	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", me);
	na.name = name;
	err = dvx_nic_open(&nic, dvx_sim_hal(fab), &na);
	if (err)
		return err;
	/* the context: zero means the default; sharing over 2 groups per peer */
	memset(&c, 0, sizeof(c));
	c.nnics = 1;
	c.nics[0] = &nic;
	c.max_comms = 2 * NCOMM;
	c.groups = 2;
	err = dvx_msg_mem_req(&c, &sreq, &freq, &rreq);
	if (err)
		goto close;
	state = aligned_alloc(sreq.align, (sreq.bytes + sreq.align - 1) / sreq.align * sreq.align);
	fifo = aligned_alloc(freq.align, freq.bytes);
	rings = aligned_alloc(rreq.align, rreq.bytes);
	buf = aligned_alloc(4096, 2 * NCOMM * LEN);
	if (!state || !fifo || !rings || !buf) {
		err = -ENOMEM;
		goto mem;
	}
	err = dvx_msg_init(&m, &c, state, sreq.bytes, fifo, freq.bytes, rings, rreq.bytes);
	if (err)
		goto mem;
	memset(&ma, 0, sizeof(ma));
	ma.addr = buf;
	ma.len = 2 * NCOMM * LEN;
	err = dvx_msg_reg_mr(&m, 0, &ma, &mr);
	if (err)
		goto fini;

	/* connect: rank 1 listens and publishes its handles, rank 0 connects; both call
	 * again until every communicator is there */
	if (me == 1)
		for (k = 0; k < NCOMM && !err; k++)
			err = dvx_msg_listen(&m, 0, &handles[k], &listen[k]);
	pthread_barrier_wait(&bar);
	if (err)
		goto fini;
	do {
		left = 0;
		for (k = 0; k < NCOMM && !err; k++) {
			if (comm[k])
				continue;
			err = me ? dvx_msg_accept(listen[k], &comm[k]) :
				   dvx_msg_connect(&m, 0, 0, &handles[k], &comm[k]);
			left += !comm[k];
		}
	} while (!err && left);
	if (me == 1)
		for (k = 0; k < NCOMM; k++)
			dvx_msg_close(listen[k]);
	if (err)
		goto done;

	/* rank 1: one receive of two tagged buffers per communicator; rank 0: a send per
	 * buffer, tags in the other order */
	for (k = 0; k < NCOMM && !err; k++) {
		if (me == 1) {
			void *bufs[2] = { buf + (2 * k) * LEN, buf + (2 * k + 1) * LEN };
			size_t sizes[2] = { LEN, LEN };
			uint32_t tags[2] = { 10, 11 };
			struct dvx_mr *mrs[2] = { &mr, &mr };

			do
				err = dvx_msg_irecv(comm[k], 2, bufs, sizes, tags, mrs, &req[k][0]);
			while (!err && !req[k][0]);
		} else {
			for (b = 1; b >= 0 && !err; b--) {
				uint8_t *p = buf + (2 * k + b) * LEN;
				uint32_t i;

				for (i = 0; i < LEN; i++)
					p[i] = pattern(k, b, i);
				do
					err = dvx_msg_isend(comm[k], p, LEN, 10 + b, &mr, &req[k][b]);
				while (!err && !req[k][b]);
			}
		}
	}
	for (k = 0; k < NCOMM && !err; k++) {
		size_t got[2];

		err = wait_req(req[k][0], got);
		if (!err && me == 0)
			err = wait_req(req[k][1], NULL);
		for (b = 0; me == 1 && !err && b < 2; b++) {
			const uint8_t *p = buf + (2 * k + b) * LEN;
			uint32_t i;

			if (got[b] != LEN)
				err = -EIO;
			for (i = 0; i < LEN && !err; i++)
				if (p[i] != pattern(k, b, i))
					err = -EIO;
		}
	}
	if (!err && me == 1) {
		dvx_msg_get_stats(&m, &st);
		printf("rank 1: %d communicators, %d x %d bytes each, checked; they share %u QPs "
		       "(%llu made a set, %llu joined one)\n",
		       NCOMM, 2, LEN, st.qps, (unsigned long long)st.primaries,
		       (unsigned long long)st.secondaries);
	}
done:
	/* nobody closes while the other may still send */
	pthread_barrier_wait(&bar);
	for (k = 0; k < NCOMM; k++)
		if (comm[k])
			dvx_msg_close(comm[k]);
	if (mr.live)
		dvx_msg_dereg_mr(&m, &mr);
fini:
	dvx_msg_fini(&m);
mem:
	free(buf);
	free(rings);
	free(fifo);
	free(state);
close:
	dvx_nic_close(&nic);
	return err;
}

static void *rank_main(void *arg)
{
	struct rank *r = arg;

	r->err = run(r->rank);
	if (r->err)
		fprintf(stderr, "rank %d: error %d\n", r->rank, r->err);
	return NULL;
}

int main(void)
{
	struct dvx_sim_fabric_cfg fc;
	struct rank r[2];
	void *fab_mem;
	size_t fsz;
	int i, ok = 1;

	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 2;
	fsz = dvx_sim_fabric_mem_size(&fc);
	fab_mem = calloc(1, fsz);
	if (!fab_mem || dvx_sim_fabric_init(fab_mem, fsz, &fc, &fab))
		return 1;
	for (i = 0; i < 2; i++) {
		struct dvx_sim_nic_cfg nc;

		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		if (dvx_sim_add_nic(fab, &nc) < 0)
			return 1;
	}
	/* the software NIC's progress thread moves the data while the ranks post and test */
	if (dvx_sim_start(fab))
		return 1;
	pthread_barrier_init(&bar, NULL, 2);
	for (i = 0; i < 2; i++) {
		r[i].rank = i;
		pthread_create(&r[i].thread, NULL, rank_main, &r[i]);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(r[i].thread, NULL);
		ok &= !r[i].err;
	}
	dvx_sim_stop(fab);
	dvx_sim_fini(fab);
	free(fab_mem);
	return ok ? 0 : 1;
}
