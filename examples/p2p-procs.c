// SPDX-License-Identifier: MIT
/*
 * examples/p2p-procs.c - the P2P transport between two ranks as processes on the
 * software NIC: each process has a fabric of its own with its NIC, the two fabrics are
 * joined by the wire (a UNIX socket; docs/sim-wire.md), the ranks meet through the
 * sockets bootstrap, and each puts 256 KiB into the other with a signal, waits for the
 * peer's signal and checks the bytes. Under a launcher (mpirun, srun) every process is
 * one rank the same way, with the MPI bootstrap (dvx_bootstrap_mpi_init(),
 * docs/bootstrap.md) in place of the sockets one; on ConnectX NICs the fabric and the
 * wire give way to dvx_hal_linux().
 *
 *   cc p2p-procs.c $(pkg-config --cflags --libs dvx) -o p2p-procs && ./p2p-procs
 *
 * Every call returns 0 or a negative errno (docs/errors.md); every wait is bounded; all
 * memory is the program's own.
 */
#define _POSIX_C_SOURCE 200809L	/* mkdtemp(), fork() */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <dvx/bootstrap/bootstrap.h>
#include <dvx/bootstrap/wire.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/nic.h>
#include <dvx/p2p/p2p.h>
#include <dvx/p2p/setup.h>
#include <dvx/hal/sim.h>

#define NRANKS 2
#define LEN (256u << 10)
#define SEC 1000000000ull

static uint8_t byte_of(int from, uint32_t i)
{
	return (uint8_t)((i >> 3) ^ (uint32_t)from * 0x5bu ^ i);
}

/* the transport between the ranks: put, signal, check; @nic is open, @bs joined */
static int transfer(int me, struct dvx_nic *nic, struct dvx_bootstrap *bs)
{
	struct dvx_p2p t;
	struct dvx_p2p_cfg pc;
	struct dvx_mem_req sreq, rreq;
	struct dvx_mr mr, smr;
	struct dvx_mr_cfg ma;
	struct dvx_mr *one[1];
	struct dvx_p2p_lbuf buf_l, sig_l;
	struct dvx_p2p_rbuf buf_r[NRANKS], sig_r[NRANKS];
	struct dvx_p2p_ticket tk;
	uint8_t *buf = NULL, *state = NULL, *rings = NULL;
	uint64_t *sig = NULL;
	int peer = 1 - me, err;
	uint32_t i;

	memset(&t, 0, sizeof(t));
	memset(&mr, 0, sizeof(mr));
	memset(&smr, 0, sizeof(smr));
	memset(&pc, 0, sizeof(pc));
	pc.rank = me;
	pc.nranks = NRANKS;
	pc.nnics = 1;
	pc.nics[0] = nic;
	pc.qps_per_nic = 2;	/* two lanes to the peer */
	pc.sq_depth = 128;
	pc.comp_depth = 64;	/* companions: completions counted without CQ polling */
	pc.bs = bs;
	pc.timeout_ns = 20 * SEC;
	err = dvx_p2p_mem_req(&pc, &sreq, &rreq);
	if (err)
		return err;
	state = aligned_alloc(64, (sreq.bytes + 63) & ~63ull);
	rings = aligned_alloc(4096, (rreq.bytes + 4095) & ~4095ull);
	buf = aligned_alloc(4096, 2 * LEN);	/* what lands, then what goes */
	sig = aligned_alloc(64, 64);
	if (!state || !rings || !buf || !sig) {
		err = -ENOMEM;
		goto out;
	}
	memset(buf, 0, 2 * LEN);
	memset(sig, 0, 64);
	err = dvx_p2p_init(&t, &pc, state, sreq.bytes, rings, rreq.bytes);
	if (err)
		goto out;
	memset(&ma, 0, sizeof(ma));
	ma.addr = buf;
	ma.len = 2 * LEN;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_WRITE;
	err = dvx_mr_reg(nic, &ma, &mr);
	ma.addr = sig;
	ma.len = 64;
	ma.access = DVX_ACCESS_LOCAL_WRITE | DVX_ACCESS_REMOTE_ATOMIC;
	if (!err)
		err = dvx_mr_reg(nic, &ma, &smr);
	one[0] = &mr;
	if (!err)
		err = dvx_p2p_lbuf_init(&buf_l, buf, 2 * LEN, one, 1);
	one[0] = &smr;
	if (!err)
		err = dvx_p2p_lbuf_init(&sig_l, sig, 64, one, 1);
	if (!err)	/* collective: every rank learns the others' addresses and keys */
		err = dvx_p2p_exchange(&t, bs, &buf_l, buf_r, pc.timeout_ns);
	if (!err)
		err = dvx_p2p_exchange(&t, bs, &sig_l, sig_r, pc.timeout_ns);
	if (err)
		goto fini;
	for (i = 0; i < LEN; i++)
		buf[LEN + i] = byte_of(me, i);
	/* on lane 1 this time: lanes are independent RC connections */
	err = dvx_p2p_put_signal(&t, peer, 1,
				 &(struct dvx_p2p_xfer){ &buf_l, LEN, &buf_r[peer], 0, LEN },
				 &(struct dvx_p2p_notify){ &sig_r[peer], 0, 1, NULL, 0, 0 },
				 pc.timeout_ns, &tk);
	if (!err)
		err = dvx_p2p_wait_local(&t, &tk, pc.timeout_ns, NULL);
	if (!err)
		err = dvx_p2p_wait_signal(&t, &sig_l, 0, DVX_CMP_EQ, 1, pc.timeout_ns, NULL);
	for (i = 0; !err && i < LEN; i++)
		if (buf[i] != byte_of(peer, i))
			err = -EIO;
	if (!err)
		printf("rank %d (process %d): %u bytes from rank %d arrived over the wire with "
		       "their signal, checked\n", me, (int)getpid(), LEN, peer);
	if (!err)	/* nobody leaves while the other may still reach its memory */
		err = dvx_bootstrap_barrier(bs, pc.timeout_ns);
fini:
	if (smr.live)
		dvx_mr_dereg(&smr);
	if (mr.live)
		dvx_mr_dereg(&mr);
	dvx_p2p_fini(&t);
out:
	free(sig);
	free(buf);
	free(rings);
	free(state);
	return err;
}

/* one rank, in its own process: fabric, bootstrap, wire, NIC, transfer */
static int rank_main(int me, const char *bsaddr)
{
	struct dvx_sim_fabric_cfg fc;
	struct dvx_sim_nic_cfg nc;
	struct dvx_sim_fabric *fab = NULL;
	struct dvx_bootstrap_sock_cfg ba;
	struct dvx_bootstrap_wire_cfg wa;
	struct dvx_bootstrap bs;
	struct dvx_nic_cfg na;
	struct dvx_nic nic;
	void *fab_mem, *bs_mem, *wire_mem;
	size_t fsz, bsz, wsz;
	char name[16];
	int err;

	/* this process's software NIC, and its own progress thread */
	dvx_sim_fabric_cfg_default(&fc);
	fc.max_nics = 1;
	fsz = dvx_sim_fabric_mem_size(&fc);
	bsz = dvx_bootstrap_sock_mem_size(NRANKS, 16, 4096);
	wsz = dvx_bootstrap_wire_mem_size(NRANKS, LEN);
	fab_mem = calloc(1, fsz);
	bs_mem = aligned_alloc(8, (bsz + 7) & ~(size_t)7);
	wire_mem = malloc(wsz);
	if (!fab_mem || !bs_mem || !wire_mem)
		return -ENOMEM;
	err = dvx_sim_fabric_init(fab_mem, fsz, &fc, &fab);
	dvx_sim_nic_cfg_default(&nc, (unsigned)me);	/* "sim_<rank>", its own GID and MAC */
	if (!err && dvx_sim_add_nic(fab, &nc) < 0)
		err = -EINVAL;
	/* the ranks meet: the sockets bootstrap at an address both know */
	memset(&ba, 0, sizeof(ba));
	ba.addr = bsaddr;
	ba.rank = me;
	ba.nranks = NRANKS;
	ba.max_unexpected = 16;
	ba.slot_bytes = 4096;
	ba.timeout_ns = 20 * SEC;
	if (!err)
		err = dvx_bootstrap_sock_init(&bs, &ba, bs_mem, bsz);
	if (err) {
		fprintf(stderr, "rank %d: fabric or bootstrap: %d\n", me, err);
		return err;
	}
	/* the wire to the other process's NIC (an abstract UNIX socket per process) */
	memset(&wa, 0, sizeof(wa));
	wa.fab = fab;
	wa.max_msg = LEN;
	err = dvx_bootstrap_wire_join(&bs, &wa, wire_mem, wsz, 20 * SEC);
	if (!err)
		err = dvx_sim_start(fab);
	memset(&nic, 0, sizeof(nic));
	memset(&na, 0, sizeof(na));
	snprintf(name, sizeof(name), "sim_%d", me);
	na.name = name;
	if (!err)
		err = dvx_nic_open(&nic, dvx_sim_hal(fab), &na);
	if (!err) {
		err = transfer(me, &nic, &bs);
		if (err)
			fprintf(stderr, "rank %d: transfer: %d (%s)\n", me, err, nic.hal.diag.msg);
		dvx_nic_close(&nic);
	} else {
		fprintf(stderr, "rank %d: wire or NIC: %d\n", me, err);
	}
	dvx_sim_stop(fab);
	dvx_bootstrap_fini(&bs);
	dvx_sim_fini(fab);	/* closes the wire too */
	free(wire_mem);
	free(bs_mem);
	free(fab_mem);
	return err;
}

int main(void)
{
	char dir[] = "/tmp/p2p-procs-XXXXXX", addr[64];
	pid_t pid;
	int st, err;

	if (!mkdtemp(dir))
		return 1;
	snprintf(addr, sizeof(addr), "unix:%s/bootstrap", dir);
	fflush(NULL);
	pid = fork();	/* rank 1 in a process of its own; rank 0 is this one */
	if (pid == 0) {
		err = rank_main(1, addr);
		fflush(NULL);
		_exit(err ? 1 : 0);
	}
	if (pid < 0)
		return 1;
	err = rank_main(0, addr);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		err = err ? err : -EIO;
	rmdir(dir);
	return err ? 1 : 0;
}
