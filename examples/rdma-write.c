// SPDX-License-Identifier: MIT
/*
 * examples/rdma-write.c - one RDMA WRITE and one fetch-add, start to finish: open a NIC
 * (the software NIC by default, a ConnectX with --dev NAME), put a CQ and a QP pair in
 * memory this program owns, connect the two QPs to each other, post with the data-path
 * helpers of dvx/nic/post.h, poll the completions, check the bytes.
 *
 *   cc rdma-write.c $(pkg-config --cflags --libs dvx) -o rdma-write
 *   ./rdma-write                 (software NIC: no hardware needed)
 *   ./rdma-write --dev mlx5_0    (a ConnectX-6/7; needs rdma-core and DEVX rights)
 *
 * The rule for every dvx call (docs/errors.md): an action returns 0 or a negative
 * errno, and on failure the NIC's diagnostic (nic.hal.diag.msg) says why in words; a
 * poll returns 1 (a completion), 0 (none yet) or the errno of an error completion.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dvx/nic/mr.h>
#include <dvx/nic/nic.h>
#include <dvx/nic/post.h>
#include <dvx/hal/sim.h>

#define DEPTH 64u		/* CQEs and SQ WQEBBs */
#define RING_BYTES (1u << 16)	/* CQ ring, two QPs' work queues, doorbell records */
#define DATA_BYTES 8192u

static struct dvx_nic nic;

/* report a failed call the way the rule says, with the NIC's own words */
static int check(int err, const char *what)
{
	if (err)
		fprintf(stderr, "%s: %d (%s)\n", what, err, nic.hal.diag.msg);
	return err;
}

/* wait for one completion on @cq (the software NIC progresses on its own thread) */
static int wait_wc(struct dvx_cq *cq, struct dvx_wc *wc)
{
	struct timespec t0, t;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		r = dvx_cq_poll(cq, wc);
		if (r)
			return r < 0 ? r : 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 5)
			return -ETIMEDOUT;	/* every wait has a bound */
	}
}

int main(int argc, char **argv)
{
	static uint64_t wr_ids[2][DEPTH];
	struct dvx_sim_fabric *fab = NULL;
	const struct dvx_hal *hal;
	struct dvx_umem_cfg ua;
	struct dvx_mr_cfg ma;
	struct dvx_cq_cfg ca;
	struct dvx_qp_cfg qa;
	struct dvx_qp_connect_cfg conn;
	struct dvx_nic_cfg na;
	struct dvx_umem umem;
	struct dvx_mr mr;
	struct dvx_cq cq;
	struct dvx_qp qp[2];
	struct dvx_mem_req wq, dbr;
	struct dvx_wc wc;
	uint8_t *rings, *data;
	void *fab_mem = NULL;
	uint64_t off, old;
	int err, i, rc = 1;

	memset(&na, 0, sizeof(na));	/* zero means the default for every field */
	if (argc == 3 && !strcmp(argv[1], "--dev")) {
		hal = dvx_hal_linux();
		na.name = argv[2];
		if (!hal) {
			fprintf(stderr, "this libdvx was built without rdma-core\n");
			return 1;
		}
	} else if (argc == 1) {
		struct dvx_sim_fabric_cfg fc;
		struct dvx_sim_nic_cfg nc;
		size_t sz;

		dvx_sim_fabric_cfg_default(&fc);
		fc.max_nics = 1;
		sz = dvx_sim_fabric_mem_size(&fc);
		fab_mem = calloc(1, sz);
		if (!fab_mem || dvx_sim_fabric_init(fab_mem, sz, &fc, &fab))
			return 1;
		dvx_sim_nic_cfg_default(&nc, 0);
		if (dvx_sim_add_nic(fab, &nc) < 0 || dvx_sim_start(fab))
			return 1;
		hal = dvx_sim_hal(fab);
		na.name = "sim_0";
	} else {
		fprintf(stderr, "usage: %s [--dev NAME]\n", argv[0]);
		return 2;
	}

	/* the memory: rings for the NIC, data for the transfers; ours, not the library's */
	rings = aligned_alloc(4096, RING_BYTES);
	data = aligned_alloc(4096, DATA_BYTES);
	if (!rings || !data)
		return 1;
	memset(rings, 0, RING_BYTES);
	memset(data, 0, DATA_BYTES);
	memset(&nic, 0, sizeof(nic));	/* objects start zeroed (a live one is -EBUSY) */
	memset(&umem, 0, sizeof(umem));
	memset(&mr, 0, sizeof(mr));
	memset(&cq, 0, sizeof(cq));
	memset(qp, 0, sizeof(qp));

	if (check(dvx_nic_open(&nic, hal, &na), "dvx_nic_open"))
		goto out;
	memset(&ua, 0, sizeof(ua));
	ua.addr = rings;
	ua.len = RING_BYTES;
	if (check(dvx_umem_reg(&nic, &ua, &umem), "dvx_umem_reg"))
		goto close;
	/* the data: the first half is the source, the second the destination and the
	 * 8-byte counter the fetch-add updates; local write for the fetched value */
	memset(&ma, 0, sizeof(ma));
	ma.addr = data;
	ma.len = DATA_BYTES;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_ATOMIC;
	if (check(dvx_mr_reg(&nic, &ma, &mr), "dvx_mr_reg"))
		goto umem;

	/* one CQ for both QPs: ring at 0, doorbell records at the end of the umem */
	memset(&ca, 0, sizeof(ca));
	ca.depth = DEPTH;
	ca.ring_umem = &umem;
	ca.ring_offset = 0;
	ca.dbr_umem = &umem;
	ca.dbr_offset = RING_BYTES - 64;
	if (check(dvx_cq_create(&nic, &ca, &cq), "dvx_cq_create"))
		goto mr;
	off = DVX_CQ_RING_BYTES(DEPTH);
	for (i = 0; i < 2; i++) {
		memset(&qa, 0, sizeof(qa));
		qa.sq_depth = DEPTH;
		qa.send_cq = &cq;
		qa.sq_wr_ids = wr_ids[i];	/* where each post's wr_id is kept */
		if (check(dvx_qp_mem_req(&qa, &wq, &dbr), "dvx_qp_mem_req"))
			goto qps;
		off = (off + wq.align - 1) / wq.align * wq.align;
		qa.wq_umem = &umem;
		qa.wq_offset = off;
		qa.dbr_umem = &umem;
		qa.dbr_offset = RING_BYTES - 64 + 8 * (uint64_t)(i + 1);
		off += wq.bytes;
		if (check(dvx_qp_create(&nic, &qa, &qp[i]), "dvx_qp_create"))
			goto qps;
	}
	/* the two QPs, connected to each other: what a peer would be, on one NIC */
	dvx_qp_connect_cfg_init(&conn);
	conn.access = DVX_ACCESS_REMOTE_WRITE | DVX_ACCESS_REMOTE_ATOMIC;
	if (check(dvx_qp_connect_pair(&qp[0], &qp[1], &conn), "dvx_qp_connect_pair"))
		goto qps;

	/* one RDMA WRITE of 4 KiB from the first half into the second */
	for (i = 0; i < 4096; i++)
		data[i] = (uint8_t)(i * 7 + 1);
	if (check(dvx_qp_post_write(&qp[0], 1, (uintptr_t)data, mr.lkey, 4096,
				    (uintptr_t)data + 4096, mr.rkey, DVX_POST_SIGNALED),
		  "dvx_qp_post_write"))
		goto qps;
	err = wait_wc(&cq, &wc);
	if (err) {
		fprintf(stderr, "WRITE completion: %d (wr_id %llu, syndrome %#x)\n", err,
			(unsigned long long)wc.wr_id, wc.syndrome);
		goto qps;
	}
	if (wc.wr_id != 1 || memcmp(data, data + 4096, 4096)) {
		fprintf(stderr, "WRITE: wrong wr_id %llu or bytes\n", (unsigned long long)wc.wr_id);
		goto qps;
	}

	/* one fetch-add of 5 on a counter holding 37: 42 after, 37 fetched */
	memcpy(data + 4096, &(uint64_t){ 37 }, 8);
	if (check(dvx_qp_post_fetch_add(&qp[0], 2, (uintptr_t)data + 4096, mr.rkey, 5,
					(uintptr_t)data + 8, mr.lkey, DVX_POST_SIGNALED),
		  "dvx_qp_post_fetch_add"))
		goto qps;
	err = wait_wc(&cq, &wc);
	if (err) {
		fprintf(stderr, "fetch-add completion: %d (syndrome %#x)\n", err, wc.syndrome);
		goto qps;
	}
	memcpy(&old, data + 8, 8);	/* the fetched value: host order unless the NIC */
	if (nic.atomic_be_results)	/* answers big-endian (nic.h says which) */
		old = __builtin_bswap64(old);
	if (wc.wr_id != 2 || wc.opcode != DVX_WC_FETCH_ADD || old != 37 ||
	    memcmp(data + 4096, &(uint64_t){ 42 }, 8)) {
		fprintf(stderr, "fetch-add: wr_id %llu, fetched %llu\n",
			(unsigned long long)wc.wr_id, (unsigned long long)old);
		goto qps;
	}
	printf("%s: RDMA WRITE 4096 B and fetch-add 37 + 5 = 42 completed and checked\n",
	       na.name);
	rc = 0;

qps:	/* teardown in reverse; every call is still checked */
	for (i = 1; i >= 0; i--)
		if (qp[i].live)
			check(dvx_qp_destroy(&qp[i]), "dvx_qp_destroy");
	if (cq.live)
		check(dvx_cq_destroy(&cq), "dvx_cq_destroy");
mr:
	check(dvx_mr_dereg(&mr), "dvx_mr_dereg");
umem:
	check(dvx_umem_dereg(&umem), "dvx_umem_dereg");
close:
	check(dvx_nic_close(&nic), "dvx_nic_close");
out:
	if (fab) {
		dvx_sim_stop(fab);
		dvx_sim_fini(fab);
	}
	free(fab_mem);
	free(rings);
	free(data);
	return rc;
}
