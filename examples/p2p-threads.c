// SPDX-License-Identifier: MIT
/*
 * examples/p2p-threads.c - the P2P transport between two ranks, each a thread with
 * its own (software) NIC: set up the transport in the ranks' own memory, exchange the
 * buffers' keys over the bootstrap, and have each rank put 64 KiB into the other with
 * a signal, then wait for the peer's signal and check its bytes.
 *
 *   cc p2p-threads.c $(pkg-config --cflags --libs dvx) -o p2p-threads && ./p2p-threads
 *
 * Ranks as threads of one process share one software-NIC fabric and a thread
 * bootstrap group; ranks as processes or hosts use the sockets bootstrap
 * (dvx_bootstrap_sock_init(), docs/bootstrap.md) and real NICs (dvx_hal_linux()) with
 * the same transport calls (docs/p2p.md). Every call returns 0 or a negative errno
 * (docs/errors.md); every wait is bounded.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dvx/bootstrap/bootstrap.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/nic.h>
#include <dvx/p2p/p2p.h>
#include <dvx/p2p/setup.h>
#include <dvx/hal/sim.h>

#define NRANKS 2
#define LEN (64u << 10)
#define SEC 1000000000ull

static struct dvx_sim_fabric *fab;
static struct dvx_bootstrap_tgroup *group;

struct rank {
	int rank;
	int ok;
	pthread_t thread;
};

static uint8_t pattern(int from, uint32_t i)
{
	return (uint8_t)(from * 31 + i * 7 + 3);
}

/* one rank: everything it makes lives in memory it allocates and frees itself */
static int run(int me, struct dvx_bootstrap *bs)
{
	struct dvx_nic nic;
	struct dvx_nic_cfg na;
	struct dvx_p2p t;
	struct dvx_p2p_cfg pc;
	struct dvx_mem_req sreq, rreq;
	struct dvx_mr data_mr, sig_mr;
	struct dvx_mr_cfg ma;
	struct dvx_mr *mrs[1];
	struct dvx_p2p_lbuf data_l, sig_l;
	struct dvx_p2p_rbuf data_r[NRANKS], sig_r[NRANKS];
	struct dvx_p2p_ticket tk;
	void *state = NULL, *rings = NULL;
	uint8_t *data = NULL;
	uint64_t *sig = NULL;
	char name[16];
	int peer = 1 - me, err;
	uint32_t i;

	memset(&nic, 0, sizeof(nic));
	memset(&t, 0, sizeof(t));
	memset(&data_mr, 0, sizeof(data_mr));
	memset(&sig_mr, 0, sizeof(sig_mr));
	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", me);
	na.name = name;
	err = dvx_nic_open(&nic, dvx_sim_hal(fab), &na);
	if (err) {
		fprintf(stderr, "rank %d: dvx_nic_open: %d\n", me, err);
		return err;
	}
	/* the transport: lanes to every other rank, in two caller regions */
	memset(&pc, 0, sizeof(pc));	/* zero means the default */
	pc.rank = me;
	pc.nranks = NRANKS;
	pc.nnics = 1;
	pc.nics[0] = &nic;
	pc.qps_per_nic = 1;
	pc.sq_depth = 256;
	pc.comp_depth = 64;
	pc.bs = bs;
	pc.timeout_ns = 10 * SEC;
	err = dvx_p2p_mem_req(&pc, &sreq, &rreq);
	if (err)
		goto close;
	state = aligned_alloc(64, (sreq.bytes + 63) & ~63ull);
	rings = aligned_alloc(4096, (rreq.bytes + 4095) & ~4095ull);
	data = aligned_alloc(4096, 2 * LEN);	/* [0, LEN): what lands; then what goes */
	sig = aligned_alloc(64, 64);
	if (!state || !rings || !data || !sig) {
		err = -ENOMEM;
		goto mem;
	}
	memset(data, 0, 2 * LEN);
	memset(sig, 0, 64);
	err = dvx_p2p_init(&t, &pc, state, sreq.bytes, rings, rreq.bytes);
	if (err) {
		fprintf(stderr, "rank %d: dvx_p2p_init: %d (%s)\n", me, err, nic.hal.diag.msg);
		goto mem;
	}
	/* least privilege (docs/security.md): the data takes puts, the signals fetch-adds */
	memset(&ma, 0, sizeof(ma));
	ma.addr = data;
	ma.len = 2 * LEN;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE;
	err = dvx_mr_reg(&nic, &ma, &data_mr);
	ma.addr = sig;
	ma.len = 64;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_ATOMIC;
	if (!err)
		err = dvx_mr_reg(&nic, &ma, &sig_mr);
	mrs[0] = &data_mr;
	if (!err)
		err = dvx_p2p_lbuf_init(&data_l, data, 2 * LEN, mrs, 1);
	mrs[0] = &sig_mr;
	if (!err)
		err = dvx_p2p_lbuf_init(&sig_l, sig, 64, mrs, 1);
	/* every rank learns every other rank's addresses and keys (collective) */
	if (!err)
		err = dvx_p2p_exchange(&t, bs, &data_l, data_r, pc.timeout_ns);
	if (!err)
		err = dvx_p2p_exchange(&t, bs, &sig_l, sig_r, pc.timeout_ns);
	if (err) {
		fprintf(stderr, "rank %d: registration or exchange: %d\n", me, err);
		goto fini;
	}

	/* put LEN bytes into the peer's landing area, then +1 on its signal word */
	for (i = 0; i < LEN; i++)
		data[LEN + i] = pattern(me, i);
	err = dvx_p2p_put_signal(&t, peer, 0,
				 &(struct dvx_p2p_xfer){ &data_l, LEN, &data_r[peer], 0, LEN },
				 &(struct dvx_p2p_notify){ &sig_r[peer], 0, 1, NULL, 0, 0 },
				 pc.timeout_ns, &tk);
	if (!err)
		err = dvx_p2p_wait_local(&t, &tk, pc.timeout_ns, NULL);	/* our put is done */
	if (!err)	/* the peer's put: its signal says the bytes are here */
		err = dvx_p2p_wait_signal(&t, &sig_l, 0, DVX_CMP_EQ, 1, pc.timeout_ns, NULL);
	if (err) {
		fprintf(stderr, "rank %d: put_signal or wait: %d\n", me, err);
		goto fini;
	}
	for (i = 0; i < LEN; i++)
		if (data[i] != pattern(peer, i)) {
			fprintf(stderr, "rank %d: byte %u from rank %d is wrong\n", me, i, peer);
			err = -EIO;
			goto fini;
		}
	printf("rank %d: %u bytes from rank %d arrived with their signal, checked\n", me, LEN,
	       peer);
	/* nobody tears down while the other may still touch its memory */
	err = dvx_bootstrap_barrier(bs, pc.timeout_ns);
fini:
	if (sig_mr.live)
		dvx_mr_dereg(&sig_mr);
	if (data_mr.live)
		dvx_mr_dereg(&data_mr);
	dvx_p2p_fini(&t);
mem:
	free(sig);
	free(data);
	free(rings);
	free(state);
close:
	dvx_nic_close(&nic);
	return err;
}

static void *rank_main(void *arg)
{
	struct rank *r = arg;
	struct dvx_bootstrap bs;

	if (dvx_bootstrap_thread_init(&bs, group, r->rank))
		return NULL;
	r->ok = run(r->rank, &bs) == 0;
	dvx_bootstrap_fini(&bs);
	return NULL;
}

int main(void)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_bootstrap_tgroup_cfg ga;
	struct rank r[NRANKS];
	void *fab_mem, *bs_mem;
	size_t fsz, gsz;
	int i, ok = 1;

	/* the software fabric: one NIC per rank, progressed by its own thread */
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = NRANKS;
	fsz = dvx_sim_fabric_mem_size(&fc);
	fab_mem = calloc(1, fsz);
	if (!fab_mem || dvx_sim_fabric_init(fab_mem, fsz, &fc, &fab))
		return 1;
	for (i = 0; i < NRANKS; i++) {
		struct dvx_sim_nic_cfg nc;

		dvx_sim_nic_cfg_default(&nc, (unsigned)i);
		if (dvx_sim_add_nic(fab, &nc) < 0)
			return 1;
	}
	/* the ranks' bootstrap: a group of threads */
	memset(&ga, 0, sizeof(ga));
	ga.nranks = NRANKS;
	ga.max_unexpected = 16;
	ga.slot_bytes = 4096;
	gsz = dvx_bootstrap_tgroup_mem_size(ga.nranks, ga.max_unexpected, ga.slot_bytes);
	bs_mem = calloc(1, gsz);
	if (!bs_mem || dvx_bootstrap_tgroup_init(&group, &ga, bs_mem, gsz) || dvx_sim_start(fab))
		return 1;
	for (i = 0; i < NRANKS; i++) {
		r[i].rank = i;
		r[i].ok = 0;
		if (pthread_create(&r[i].thread, NULL, rank_main, &r[i]))
			return 1;
	}
	for (i = 0; i < NRANKS; i++) {
		pthread_join(r[i].thread, NULL);
		ok &= r[i].ok;
	}
	dvx_sim_stop(fab);
	dvx_bootstrap_tgroup_fini(group);
	dvx_sim_fini(fab);
	free(bs_mem);
	free(fab_mem);
	return ok ? 0 : 1;
}
