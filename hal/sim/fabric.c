// SPDX-License-Identifier: MIT
/*
 * hal/sim/fabric.c - the sim's fabric: NICs, the progress loop (doorbell watching,
 * round-robin execution, the progress thread), faults, trace, statistics, the fake
 * dma-bufs' calls. The lookups it shares with the other files are in store.c, the
 * fabric's storage and its hal tables are put together in init.c.
 *
 * Doorbells. The loop learns of work only as hardware does: an 8-byte write to a UAR
 * register (a doorbell, or the first 8 bytes of a BlueFlame copy), then the QP's
 * doorbell record. Each watched register is consumed with an atomic exchange to 0, so
 * two writes of the same value are two doorbells. In the strict model (the default) a
 * doorbell starts only the QP it names, up to the index it carries, after checking it
 * against the QP's record and its last doorbell; a mismatch is a fault that starts
 * nothing. Several QPs may ring one register, and a later write can overwrite an
 * earlier one before the loop reads it (hardware would have received both), so an
 * accepted doorbell also starts the other QPs of its page whose record is ahead,
 * counted as rescues (docs/sim.md). The loose model re-reads every record of a rung
 * page instead. The record holds 16 bits of the SQ producer counter; the loop extends
 * indexes to the free-running sq_db.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "../host_priv.h"
#include "ctrl.h"

#define SIM_MAX_PASSES 1024u	/* dvx_sim_step(): bound on passes */
#define SIM_QP_BUDGET 64u	/* WQEs one QP may run per pass */

/* ---- NICs -------------------------------------------------------------------- */

void dvx_sim_nic_cfg_default(struct dvx_sim_nic_cfg *cfg, unsigned index)
{
	struct dvx_sim_port_cfg *p;
	unsigned i;

	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->name, sizeof(cfg->name), "sim_%u", index);
	snprintf(cfg->pci, sizeof(cfg->pci), "0000:%02x:00.0", (0x50 + index) & 0xff);
	cfg->nports = 1;
	cfg->cd = 1;
	cfg->atomic = 1;
	cfg->atomic_be_only = 0;
	cfg->force_loopback = 1;
	cfg->cq_oi = 1;
	cfg->bf = 1;
	cfg->devx = 1;
	cfg->log_max_qp_sz = 15;
	cfg->log_max_cq_sz = 22;
	cfg->log_max_qp = 17;
	cfg->log_max_cq = 24;
	cfg->log_max_mr = 24;
	cfg->log_max_msg = 30;
	cfg->log_max_ra_req_qp = 4;
	cfg->log_max_ra_res_qp = 4;
	cfg->log_max_pd = 23;
	cfg->max_wqe_sz_sq = 1024;
	cfg->max_wqe_sz_rq = 512;
	cfg->vendor_part_id = 0x1021;
	cfg->numa_node = -1;
	cfg->node_guid = 0x9c63c00300000000ull | ((uint64_t)(index + 1) << 8);
	snprintf(cfg->fw_ver, sizeof(cfg->fw_ver), "28.39.1002");
	for (i = 0; i < DVX_SIM_MAX_PORTS; i++) {
		p = &cfg->port[i];
		p->link_layer = DVX_LINK_LAYER_ETHERNET;
		p->active_mtu = 5;
		p->up = 1;
		p->lid = (uint16_t)((index + 1) * DVX_SIM_MAX_PORTS + i - 1);
		/* ::ffff:10.<port>.<index+1>.1, MAC 02:00:00:<port>:<index+1>:01 */
		p->gid[10] = 0xff;
		p->gid[11] = 0xff;
		p->gid[12] = 10;
		p->gid[13] = (uint8_t)i;
		p->gid[14] = (uint8_t)(index + 1);
		p->gid[15] = 1;
		p->mac[0] = 0x02;
		p->mac[3] = (uint8_t)i;
		p->mac[4] = (uint8_t)(index + 1);
		p->mac[5] = 0x01;
	}
}

static bool nic_cfg_ok(const struct dvx_sim_nic_cfg *c)
{
	unsigned i;

	if (!c->name[0] || !memchr(c->name, 0, sizeof(c->name)) ||
	    !memchr(c->pci, 0, sizeof(c->pci)) || c->nports < 1 ||
	    c->nports > DVX_SIM_MAX_PORTS || c->log_max_qp_sz > 15 || c->log_max_cq_sz > 31 ||
	    c->log_max_qp > 31 || c->log_max_msg > 31 || c->log_max_ra_req_qp > 7 ||
	    c->log_max_ra_res_qp > 7 || c->log_max_pd > 31 || c->max_wqe_sz_sq < 64 ||
	    c->max_wqe_sz_rq < 16 || c->ts_cap > 2)
		return false;
	for (i = 0; i < c->nports; i++) {
		const struct dvx_sim_port_cfg *p = &c->port[i];

		if ((p->link_layer != DVX_LINK_LAYER_IB &&
		     p->link_layer != DVX_LINK_LAYER_ETHERNET) ||
		    p->active_mtu < 1 || p->active_mtu > 5)
			return false;
		/* QUERY_HCA_CAP has one port_type: every port the same link layer */
		if (p->link_layer != c->port[0].link_layer)
			return false;
	}
	return true;
}

int dvx_sim_add_nic(struct dvx_sim_fabric *fab, const struct dvx_sim_nic_cfg *cfg)
{
	struct sim_fabric *f = sim_fab_of(fab);
	struct sim_nic *n;
	uint32_t i;
	int rc;

	if (!fab || !cfg || !nic_cfg_ok(cfg))
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	if (f->nnics >= f->cfg.max_nics) {
		rc = -ENOSPC;
		goto unlock;
	}
	for (i = 0; i < f->nnics; i++)
		if (!strcmp(f->nics[i].cfg.name, cfg->name) ||
		    (cfg->pci[0] && !strcmp(f->nics[i].cfg.pci, cfg->pci))) {
			rc = -EEXIST;
			goto unlock;
		}
	n = &f->nics[f->nnics];
	n->cfg = *cfg;
	dvx_sim_caps_build(n);
	rc = (int)f->nnics++;
unlock:
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int dvx_sim_nic_cfg_get(struct dvx_sim_fabric *fab, unsigned index, struct dvx_sim_nic_cfg *cfg)
{
	struct sim_fabric *f = sim_fab_of(fab);
	int rc = -ENOENT;

	if (!fab || !cfg)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	if (index < f->nnics) {
		*cfg = f->nics[index].cfg;
		rc = 0;
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

const struct dvx_hal *dvx_sim_hal(struct dvx_sim_fabric *fab)
{
	return fab ? &sim_fab_of(fab)->hal : NULL;
}

int dvx_sim_set_port(struct dvx_sim_fabric *fab, unsigned nic, unsigned port, int up)
{
	struct sim_fabric *f = sim_fab_of(fab);
	int rc = -EINVAL;

	if (!fab)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	if (nic < f->nnics && port >= 1 && port <= f->nics[nic].cfg.nports) {
		f->nics[nic].cfg.port[port - 1].up = up ? 1 : 0;
		rc = 0;
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

/* ---- the progress loop ---------------------------------------------------------- */

/* the SQ counter of @qp's doorbell record (16 bits) into @c; -EIO when the record
 * could not be read (a failed DMA read of device memory) */
static int sq_record(struct sim_fabric *fab, const struct sim_qp *qp, uint16_t *c)
{
	uint32_t w;

	if (sim_pull(fab, qp->dbr_umem, qp->dbrec, 8))
		return -EIO;
	w = __atomic_load_n((const uint32_t *)(const void *)(qp->dbrec + 4), __ATOMIC_ACQUIRE);
	*c = (uint16_t)(dvx_be32_to_cpu((DVX_FORCE dvx_be32)w) & 0xffff);
	return 0;
}

/* loose model: read the SQ counter of @qp's doorbell record and extend it to sq_db */
static void db_refresh(struct sim_fabric *fab, struct sim_qp *qp)
{
	uint32_t nd;
	uint16_t c;

	if (sq_record(fab, qp, &c))
		return;		/* the record could not be read: nothing new, as far as known */
	nd = qp->sq_db + (uint16_t)(c - (uint16_t)qp->sq_db);
	if (nd != qp->sq_db) {
		qp->sq_db = nd;
		fab->dbr_updates++;
	}
}

static void db_fault(struct sim_fabric *fab, const struct sim_nic *nic, const struct sim_uar *u,
		     uint32_t kind, uint32_t qpn, uint32_t index, const struct sim_qp *qp,
		     uint64_t raw)
{
	uint16_t r = 0;

	fab->db_faults++;
	if (!fab->db_faults_unread++) {
		struct dvx_sim_db_fault *f = &fab->db_first;

		memset(f, 0, sizeof(*f));
		f->kind = kind;
		f->nic = nic->index;
		f->page_id = u->page_id;
		f->qpn = qpn;
		f->index = index & 0xffff;
		if (qp && sq_record(fab, qp, &r))
			r = 0;
		f->record = r;
		f->last = qp ? qp->db_last & 0xffff : 0;
		f->raw = raw;
	}
}

/* @idx16 as the free-running index nearest @base, a tie going forward */
static uint32_t db_near(uint32_t base, uint16_t idx16)
{
	uint16_t d = (uint16_t)(idx16 - (uint16_t)base);

	return d <= 0x8000u ? base + d : base - (uint16_t)((uint16_t)base - idx16);
}

/*
 * The index up to which the doorbell @raw (memory order) runs its QP. Bytes 1-2 carry
 * a WQEBB index, bytes 4-6 the QPN, byte 7 the ds of a control segment (prm 3.2): 0 in
 * the {BE32(pi << 8), BE32(qpn << 8)} doorbell, whose index is the producer index; not
 * 0 when the bytes are a control segment (a BlueFlame copy, or rdma-core's doorbell),
 * whose index is the WQE's own, so the doorbell covers it and ends after it.
 */
static uint16_t db_index(uint64_t raw)
{
	const uint8_t *b = (const uint8_t *)&raw;
	uint32_t ds = b[7] & 0x3fu;

	return (uint16_t)((b[1] << 8 | b[2]) + (ds ? (ds + 3u) >> 2 : 0));
}

/*
 * Strict model: the doorbell @raw for @qp.
 *
 * The 16-bit index is placed by the record: the record lies between what the NIC may
 * run (sq_db) and a ring beyond what it ran, so its free-running value is certain, and
 * a right doorbell lies at or behind it and at or after the last one (db_last). Placed
 * from db_last, as it once was, a right doorbell after rescues had carried the QP half
 * the 16-bit space further read as one from the past and started nothing.
 */
static void db_strict(struct sim_fabric *fab, struct sim_nic *nic, struct sim_uar *u,
		      struct sim_qp *qp, uint64_t raw)
{
	uint32_t nw = 1u << qp->log_sq_size, pi, rec;
	uint16_t idx = db_index(raw), r, ahead;

	if (qp->state == SIM_QPS_RST)
		return;		/* a QP in RST ignores doorbells */
	if (sq_record(fab, qp, &r))
		return;		/* the record could not be read (counted as a DMA error) */
	rec = db_near(qp->sq_db, r);
	pi = rec - (uint16_t)(r - idx);
	if ((int32_t)(pi - qp->db_last) < 0) {
		/* not between the last doorbell and the record: beyond the record or
		 * behind the last doorbell, whichever is nearer */
		ahead = (uint16_t)(idx - r);
		if (!ahead || ahead >= (uint16_t)((uint16_t)qp->db_last - idx)) {
			db_fault(fab, nic, u, DVX_SIM_DBF_BACKWARDS, qp->qpn, idx, qp, raw);
			return;
		}
		pi = rec + ahead;
		db_fault(fab, nic, u, (int32_t)(pi - qp->sq_db) > 0 && pi - qp->sq_ci > nw ?
			 DVX_SIM_DBF_RANGE : DVX_SIM_DBF_BEYOND_DBR, qp->qpn, idx, qp, raw);
		return;
	}
	if ((int32_t)(pi - qp->sq_db) > 0 && pi - qp->sq_ci > nw) {
		db_fault(fab, nic, u, DVX_SIM_DBF_RANGE, qp->qpn, idx, qp, raw);
		return;
	}
	qp->db_last = pi;
	if ((int32_t)(pi - qp->sq_db) > 0) {
		qp->sq_db = pi;
		fab->dbr_updates++;
	}
}

/*
 * Strict model: a doorbell of another QP to @u was consumed; @qp, bound to the same
 * page, has its record ahead of what the NIC may run. Its own doorbell may have been
 * overwritten in the one-word register before the loop read it (hardware receives
 * every write), so it runs up to its record, counted as a rescue.
 *
 * It stands for doorbells, so db_last follows, but only to sq_db as it was: a doorbell
 * of @qp written after the register was consumed carries at least the record of that
 * moment, so at least sq_db, yet may be behind the record read now (its poster wrote
 * its register, then its next record, in between) and is no fault when it comes.
 */
static void db_rescue(struct sim_fabric *fab, struct sim_nic *nic, struct sim_uar *u,
		      struct sim_qp *qp)
{
	uint32_t d, rec;
	uint16_t r;

	if (qp->state == SIM_QPS_RST || sq_record(fab, qp, &r))
		return;
	d = (uint16_t)(r - (uint16_t)qp->sq_db);
	if (!d || d > 0x8000u)
		return;		/* nothing new (or a record behind: nothing to run) */
	rec = qp->sq_db + d;
	if (rec - qp->sq_ci > (1u << qp->log_sq_size)) {
		db_fault(fab, nic, u, DVX_SIM_DBF_RANGE, qp->qpn, r, qp, 0);
		return;
	}
	if ((int32_t)(qp->sq_db - qp->db_last) > 0)
		qp->db_last = qp->sq_db;
	qp->sq_db = rec;
	fab->dbr_updates++;
	fab->db_rescued++;
}

/* the QPN a doorbell names: bytes 4-7 are BE32(qpn << 8 | ds) in both conventions
 * (prm 3.2) */
static uint32_t db_qpn(uint64_t raw)
{
	return dvx_get_be32((const uint8_t *)&raw + 4) >> 8;
}

/*
 * Consume the register(s) of one UAR page; true if any was written. A BlueFlame page
 * has two, which a poster's doorbells alternate: three of one QP before the loop looks
 * leave the third in the first register and the second in the other, so two that name
 * the same QP are taken in the order of their indexes, the order hardware received
 * them in (a right poster's doorbells only grow); read register by register, the third
 * came first and the second was refused as backwards.
 */
static bool uar_consume(struct sim_fabric *fab, struct sim_nic *nic, struct sim_uar *u,
			uint32_t *named, unsigned *nnamed)
{
	uint32_t off[2] = { u->reg_off, u->reg_off + DVX_SIM_BF_HALF };
	unsigned i, n = 0, nreg = u->type == DVX_UAR_BF ? 2 : 1;
	uint64_t v[2];

	*nnamed = 0;
	for (i = 0; i < nreg; i++) {
		uint64_t *reg = (uint64_t *)(void *)(u->page + off[i]);

		/* read first: an idle poll must not write the writers' cache line */
		if (!__atomic_load_n(reg, __ATOMIC_RELAXED))
			continue;
		v[n] = __atomic_exchange_n(reg, 0, __ATOMIC_ACQ_REL);
		n += v[n] != 0;
	}
	if (n == 2 && db_qpn(v[0]) == db_qpn(v[1]) &&
	    (uint16_t)(db_index(v[0]) - db_index(v[1])) - 1u < 0x8000u) {
		uint64_t t = v[0];

		v[0] = v[1];
		v[1] = t;
	}
	for (i = 0; i < n; i++) {
		uint32_t qpn = db_qpn(v[i]);
		struct sim_qp *qp = dvx_sim_qp_find(nic, qpn);

		u->last = v[i];
		fab->doorbells++;
		if (!qp || qp->uar_page != u->page_id) {
			fab->db_stray++;
			if (fab->db_mode == DVX_SIM_DB_STRICT)
				db_fault(fab, nic, u, DVX_SIM_DBF_QPN, qpn, 0, NULL, v[i]);
			continue;
		}
		if (fab->db_mode == DVX_SIM_DB_STRICT) {
			db_strict(fab, nic, u, qp, v[i]);
			named[(*nnamed)++] = qpn;
		}
	}
	return n != 0;
}

void dvx_sim_nic_doorbells(struct sim_fabric *fab, struct sim_nic *nic)
{
	uint32_t j, k, named[2];
	unsigned nnamed;

	for (j = 0; j < nic->uar_hi; j++) {
		struct sim_uar *u = &nic->uars[j];

		if (!u->page_id || !uar_consume(fab, nic, u, named, &nnamed))
			continue;
		if (fab->db_mode == DVX_SIM_DB_STRICT && !nnamed)
			continue;	/* only strays: they start nothing */
		for (k = 0; k < nic->qp_hi; k++) {
			struct sim_qp *qp = &nic->qps[k];

			if (!qp->qpn || qp->uar_page != u->page_id || qp->state == SIM_QPS_RST)
				continue;
			if (fab->db_mode == DVX_SIM_DB_LOOSE)
				db_refresh(fab, qp);
			else if (qp->qpn != named[0] && (nnamed < 2 || qp->qpn != named[1]))
				db_rescue(fab, nic, u, qp);
		}
	}
}

static void scan_doorbells(struct sim_fabric *fab)
{
	uint32_t i;

	for (i = 0; i < fab->nnics; i++)
		dvx_sim_nic_doorbells(fab, &fab->nics[i]);
}

unsigned dvx_sim_pass(struct sim_fabric *fab, bool *progress)
{
	uint32_t nq = fab->cfg.max_qps, start = fab->rr % nq, dir = 1, n0 = 0;
	uint64_t now = 0, t0 = 0;
	unsigned done = 0;
	uint32_t i, k;

	if (fab->ro_on) {
		/* any interleaving of the QPs: a random start, direction and first NIC
		 * here, a random budget per QP below */
		start = sim_ro_rand(fab, nq);
		dir = sim_ro_rand(fab, 2) ? 1 : nq - 1;
		n0 = sim_ro_rand(fab, fab->nnics ? fab->nnics : 1);
		fab->ro_shuffled++;
	}

	fab->steps++;
	if (fab->wire_ops) {
		uint64_t t = t0 = dvx_sim_now_ns(), gap = t - fab->wire_last_pass;
		uint64_t allow = 2 * fab->idle_sleep_ns > SIM_WIRE_GAP_NS ? 2 * fab->idle_sleep_ns
									   : SIM_WIRE_GAP_NS;

		if (fab->wire_last_pass && gap > allow) {
			fab->wire_frozen_ns += gap - allow;
			fab->wire_frozen++;
		}
	}
	/* what other processes sent first: responses wake the QPs that wait for them */
	if (fab->wire_ops && fab->wire_ops->progress(fab))
		*progress = true;
	scan_doorbells(fab);
	for (i = 0; i < fab->nnics; i++) {
		struct sim_nic *nic = &fab->nics[(n0 + i) % fab->nnics];
		/* the slots from qp_hi on are empty: visiting [0, hi) from s in the same
		 * direction meets the live QPs in the order a walk over the whole table would */
		uint32_t hi = nic->qp_hi, s = start, d = dir == 1 ? 1 : hi - 1;

		if (s >= hi)
			s = dir == 1 ? 0 : hi - 1;
		for (k = 0; k < hi; k++) {
			struct sim_qp *qp = &nic->qps[(s + (uint64_t)k * d) % hi];
			unsigned n;

			if (!qp->qpn)
				continue;
			if (qp->state == SIM_QPS_ERR) {
				uint32_t rq = qp->rq ? dvx_sim_qp_rq_counter(qp) : qp->flush_rq;

				if (qp->sq_db != qp->flush_db || rq != qp->flush_rq) {
					qp->flush_db = qp->sq_db;
					qp->flush_rq = rq;
					dvx_sim_exec_flush(fab, qp);
					*progress = true;
				}
				continue;
			}
			if (qp->state != SIM_QPS_RTS || qp->sq_ci == qp->sq_db)
				continue;
			if (qp->stall_until_ns) {
				if (!now)
					now = dvx_sim_now_ns();
				/* a head waiting for its answer on the wire: the WQEs after it
				 * still go out (the window, docs/sim-wire.md) */
				if (now < qp->stall_until_ns && !qp->exec.w_cnt)
					continue;
			}
			n = dvx_sim_exec_qp(fab, qp, fab->ro_on ? 1 + sim_ro_rand(fab, SIM_QP_BUDGET)
								: SIM_QP_BUDGET);
			if (n) {
				done += n;
				*progress = true;
			}
		}
	}
	fab->rr++;
	/* the gap runs from the end of this pass: a long pass is running time, not a stall */
	if (fab->wire_ops) {
		fab->wire_ops->flush(fab);	/* what this pass queued, in one write a peer */
		fab->wire_last_pass = dvx_sim_now_ns();
		fab->wpasses++;
		fab->wpass_ns += fab->wire_last_pass - t0;
	}
	return done;
}

/* the passes of one step (fab->lock held) */
static unsigned sim_step_locked(struct sim_fabric *f)
{
	unsigned total = 0, i;

	f->ro_gen++;	/* what the reorder mode left for later may go on now */
	for (i = 0; i < SIM_MAX_PASSES; i++) {
		bool progress = false;

		total += dvx_sim_pass(f, &progress);
		if (!progress)
			break;
	}
	return total;
}

unsigned dvx_sim_step(struct dvx_sim_fabric *fab)
{
	struct sim_fabric *f = sim_fab_of(fab);
	unsigned total;

	if (!fab)
		return 0;
	pthread_mutex_lock(&f->lock);
	total = sim_step_locked(f);
	pthread_mutex_unlock(&f->lock);
	return total;
}

#define SIM_HELP_SPINS 1024u	/* idle spins from which the thread has a CPU of its own */

/*
 * A waiter's step (the hal's nic_progress, which dvx's waits call as they poll): with a
 * wire and the progress thread running, a step that finds the thread in a pass leaves
 * the work to it instead of queueing behind it on the lock: two threads taking turns on
 * one lock for every pass cost each a futex wake-up, which doubled the wire's latency
 * when the poller stepped (bench/RESULTS.md, 2026-11-29). The thread's next pass does
 * what this one would have (it waits only after a pass that found nothing, and its wait
 * looks at the doorbells and the rings first); the waiter polls again.
 */
void dvx_sim_help(struct sim_fabric *f)
{
	if (atomic_load_explicit(&f->wire_on, memory_order_relaxed) &&
	    atomic_load_explicit(&f->thread_up, memory_order_relaxed)) {
		/* a thread told to spin long when idle has a CPU of its own: while it is
		 * awake the waiter leaves it the work, so that a caller that tests often
		 * (NCCL's proxy thread) does not run whole passes itself and the NIC's
		 * state does not move between two cores each turn (bench/RESULTS.md,
		 * 2026-11-29) */
		if (__atomic_load_n(&f->idle_spins, __ATOMIC_RELAXED) >= SIM_HELP_SPINS &&
		    !atomic_load_explicit(&f->idle_armed, memory_order_relaxed)) {
			__atomic_fetch_add(&f->help_busy, 1, __ATOMIC_RELAXED);
			return;
		}
		if (pthread_mutex_trylock(&f->lock)) {
			__atomic_fetch_add(&f->help_busy, 1, __ATOMIC_RELAXED);
			return;
		}
	} else {
		pthread_mutex_lock(&f->lock);
	}
	f->helps++;
	(void)sim_step_locked(f);
	pthread_mutex_unlock(&f->lock);
}

/* ---- wake-ups ----------------------------------------------------------------------- */

/* a doorbell written and not consumed yet, in any UAR of the fabric (fab->lock held) */
static bool doorbells_pending(struct sim_fabric *fab)
{
	uint32_t i, j;

	for (i = 0; i < fab->nnics; i++)
		for (j = 0; j < fab->nics[i].uar_hi; j++) {
			const struct sim_uar *u = &fab->nics[i].uars[j];
			const uint64_t *r0, *r1;

			if (!u->page_id)
				continue;
			r0 = (const uint64_t *)(const void *)(u->page + u->reg_off);
			r1 = (const uint64_t *)(const void *)(u->page + u->reg_off +
								DVX_SIM_BF_HALF);
			if (__atomic_load_n(r0, __ATOMIC_RELAXED) ||
			    (u->type == DVX_UAR_BF && __atomic_load_n(r1, __ATOMIC_RELAXED)))
				return true;
		}
	return false;
}

bool dvx_sim_idle_arm(struct sim_fabric *fab)
{
	atomic_store_explicit(&fab->idle_armed, 1, memory_order_seq_cst);
	/* the flag before the registers are read; a poster's kick fences between its
	 * doorbell and its read of the flag: one of the two sees the other */
	atomic_thread_fence(memory_order_seq_cst);
	if (doorbells_pending(fab)) {
		atomic_store_explicit(&fab->idle_armed, 0, memory_order_relaxed);
		return false;
	}
	return true;
}

void dvx_sim_idle_disarm(struct sim_fabric *fab, bool kicked)
{
	uint64_t v;

	atomic_store_explicit(&fab->idle_armed, 0, memory_order_relaxed);
	/* a kick that took the flag after this reads is read at the next wait: one wait
	 * ends early, nothing is lost */
	if (kicked && fab->kick_fd >= 0)
		(void)!read(fab->kick_fd, &v, sizeof(v));
}

void dvx_sim_kick(struct sim_fabric *fab)
{
	uint64_t one = 1;

	/* the caller's doorbell store before the flag is read */
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&fab->idle_armed, memory_order_relaxed) ||
	    !atomic_exchange_explicit(&fab->idle_armed, 0, memory_order_acq_rel))
		return;	/* awake, or another poster's kick has woken it */
	atomic_fetch_add_explicit(&fab->kicks, 1, memory_order_relaxed);
	(void)!write(fab->kick_fd, &one, sizeof(one));
}

void dvx_sim_kick_open(struct sim_fabric *fab)
{
	if (fab->kick_fd < 0)
		fab->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

/* ---- the progress thread ---------------------------------------------------------- */

/*
 * The progress thread's look between passes when it is idle (f->lock held): true when a
 * pass has something to do that a look can see: a doorbell, a QP with WQEs to run that
 * are not only waiting for their answers, a QP in ERR with something to flush, a frame
 * in a ring or bytes waiting to go (sim_wire_ops.pending). What only a pass sees (a
 * time-out, a socket's bytes, a join) waits for the next whole pass, one look in
 * SIM_PEEK_EVERY. An idle pass costs about half a microsecond on the H200 host with
 * three QPs (most of it the QPs' visits and their clock reads), a look a few loads:
 * the thread finds new work sooner and holds the lock less (docs/sim-wire.md).
 */
#define SIM_PEEK_EVERY 16u
#define SIM_THREAD_SLACK_NS 1000u	/* the progress thread's timer slack */

static bool sim_peek(struct sim_fabric *f)
{
	uint32_t i, k;

	if (f->ro_on || !f->wire_ops || f->faults.delay_ns)
		return true;
	if (doorbells_pending(f))
		return true;
	for (i = 0; i < f->nnics; i++) {
		const struct sim_nic *nic = &f->nics[i];

		for (k = 0; k < nic->qp_hi; k++) {
			const struct sim_qp *qp = &nic->qps[k];

			if (!qp->qpn)
				continue;
			if (qp->state == SIM_QPS_ERR) {
				if (qp->sq_db != qp->flush_db ||
				    (qp->rq && dvx_sim_qp_rq_counter(qp) != qp->flush_rq))
					return true;
				continue;
			}
			if (qp->state == SIM_QPS_RTS && qp->sq_ci != qp->sq_db &&
			    (!qp->exec.w_cnt || qp->stall_until_ns == 1))
				return true;
		}
	}
	return f->wire_ops->pending(f);
}

static void *progress_main(void *arg)
{
	struct sim_fabric *f = arg;
	uint32_t idle = 0;

	/* the NIC's thread: its idle waits end on time. With Linux's default slack of 50 us
	 * a 20 us wait took 70-75 (bench/RESULTS.md, 2026-11-30), and a doorbell no poster
	 * kicks (GPU code) is found only when a wait ends */
	(void)dvx_host_thread_slack_ns(SIM_THREAD_SLACK_NS);

	while (atomic_load_explicit(&f->run, memory_order_acquire)) {
		bool progress = false, whole;
		uint32_t spins;
		uint64_t sleep_ns;

		pthread_mutex_lock(&f->lock);
		/* idle: a look first, a whole pass only when it finds something or every
		 * SIM_PEEK_EVERY looks (the time-outs) */
		whole = !idle || !(idle % SIM_PEEK_EVERY);
		if (!whole && sim_peek(f)) {
			whole = true;
			f->peek_hits++;
		}
		if (whole) {
			f->ro_gen++;
			dvx_sim_pass(f, &progress);
		} else {
			f->peeks++;
		}
		spins = f->idle_spins;
		sleep_ns = f->idle_sleep_ns;
		pthread_mutex_unlock(&f->lock);
		if (progress) {
			idle = 0;
			continue;
		}
		if (++idle <= spins) {
			dvx_host_cpu_relax();
		} else if (sleep_ns && f->wire_ops) {
			uint64_t t0 = dvx_sim_now_ns();

			/* woken by a frame from another process as soon as it comes */
			if (f->wire_ops->idle_wait(f, sleep_ns)) {
				__atomic_fetch_add(&f->sleeps, 1, __ATOMIC_RELAXED);
				__atomic_fetch_add(&f->slept_ns, dvx_sim_now_ns() - t0,
						   __ATOMIC_RELAXED);
			}
		} else if (sleep_ns) {
			struct timespec ts = { (time_t)(sleep_ns / 1000000000ull),
					       (long)(sleep_ns % 1000000000ull) };

			nanosleep(&ts, NULL);
		} else {
			sched_yield();
		}
	}
	return NULL;
}

void dvx_sim_set_idle(struct dvx_sim_fabric *fab, uint32_t spins, uint64_t sleep_ns)
{
	struct sim_fabric *f = sim_fab_of(fab);

	if (!fab)
		return;
	pthread_mutex_lock(&f->lock);
	__atomic_store_n(&f->idle_spins, spins, __ATOMIC_RELAXED);	/* dvx_sim_help() */
	f->idle_sleep_ns = sleep_ns;
	pthread_mutex_unlock(&f->lock);
}

int dvx_sim_start(struct dvx_sim_fabric *fab)
{
	struct sim_fabric *f = sim_fab_of(fab);
	int rc;

	if (!fab)
		return -EINVAL;
	if (atomic_load(&f->thread_up))
		return -EALREADY;
	atomic_store(&f->run, 1);
	rc = pthread_create(&f->thread, NULL, progress_main, f);
	if (rc) {
		atomic_store(&f->run, 0);
		return -rc;
	}
	atomic_store(&f->thread_up, 1);
	return 0;
}

int dvx_sim_stop(struct dvx_sim_fabric *fab)
{
	struct sim_fabric *f = sim_fab_of(fab);

	if (!fab)
		return -EINVAL;
	if (!atomic_load(&f->thread_up))
		return -EALREADY;
	atomic_store_explicit(&f->run, 0, memory_order_release);
	pthread_join(f->thread, NULL);
	atomic_store(&f->thread_up, 0);
	return 0;
}

/* ---- faults, trace, statistics ------------------------------------------------------ */

void dvx_sim_set_faults(struct dvx_sim_fabric *fab, const struct dvx_sim_faults *fl)
{
	struct sim_fabric *f = sim_fab_of(fab);

	if (!fab)
		return;
	pthread_mutex_lock(&f->lock);
	if (fl)
		f->faults = *fl;
	else
		memset(&f->faults, 0, sizeof(f->faults));
	pthread_mutex_unlock(&f->lock);
}

void dvx_sim_set_trace(struct dvx_sim_fabric *fab, dvx_sim_trace_fn fn, void *arg)
{
	struct sim_fabric *f = sim_fab_of(fab);

	if (!fab)
		return;
	pthread_mutex_lock(&f->lock);
	f->trace = fn;
	f->trace_arg = fn ? arg : NULL;
	pthread_mutex_unlock(&f->lock);
}

int dvx_sim_get_stats(struct dvx_sim_fabric *fab, struct dvx_sim_stats *st)
{
	struct sim_fabric *f = sim_fab_of(fab);
	const struct dvx_sim_fabric_cfg *c;
	uint32_t i, j;

	if (!fab || !st)
		return -EINVAL;
	c = &f->cfg;
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&f->lock);
	st->steps = f->steps;
	st->doorbells = f->doorbells;
	st->db_stray = f->db_stray;
	st->dbr_updates = f->dbr_updates;
	st->db_faults = f->db_faults;
	st->db_rescued = f->db_rescued;
	st->wqes_executed = f->wqes_executed;
	st->cqes_written = f->cqes_written;
	st->dma_reads = f->dma_reads;
	st->dma_writes = f->dma_writes;
	st->dma_errors = f->dma_errors;
	st->ro_shuffled = f->ro_shuffled;
	st->ro_splits = f->ro_splits;
	st->ro_tail_first = f->ro_tail_first;
	st->ro_early = f->ro_early;
	st->ro_fenced = f->ro_fenced;
	st->cmds = f->cmds;
	st->cmd_errors = f->cmd_errors;
	for (i = 0; i < f->nnics; i++) {
		struct sim_nic *n = &f->nics[i];

		for (j = 0; j < c->max_pds; j++)
			st->live[DVX_SIM_LIVE_PD] += n->pds[j].pdn != 0;
		for (j = 0; j < c->max_umems; j++)
			st->live[DVX_SIM_LIVE_UMEM] += n->umems[j].id != 0;
		for (j = 0; j < c->max_uars; j++)
			st->live[DVX_SIM_LIVE_UAR] += n->uars[j].page_id != 0;
		for (j = 0; j < c->max_mrs; j++)
			st->live[DVX_SIM_LIVE_MR] += n->mrs[j].lkey != 0;
		for (j = 0; j < c->max_cqs; j++)
			st->live[DVX_SIM_LIVE_CQ] += n->cqs[j].cqn != 0;
		for (j = 0; j < c->max_qps; j++)
			st->live[DVX_SIM_LIVE_QP] += n->qps[j].qpn != 0;
		st->live[DVX_SIM_LIVE_OPEN] += n->open_count;
	}
	for (j = 0; j < c->max_dmabufs; j++)
		st->live[DVX_SIM_LIVE_DMABUF] += f->dmabufs[j].fd != 0;
	for (j = 0; j < c->max_gpu_mems; j++) {
		st->live[DVX_SIM_LIVE_GPU_MEM] += f->gpu_mems[j].kind == SIM_GPU_MEM_ALLOC ||
						  f->gpu_mems[j].kind == SIM_GPU_MEM_IMPORT;
		st->live[DVX_SIM_LIVE_GPU_HOSTREG] += f->gpu_mems[j].kind == SIM_GPU_MEM_HOSTREG;
	}
	for (j = 0; j < SIM_GPU_STREAMS; j++)
		st->live[DVX_SIM_LIVE_GPU_STREAM] += f->gpu_streams[j];
	for (j = 0; j < f->ngpus; j++)
		st->live[DVX_SIM_LIVE_GPU_CTX] += f->gpus[j].ctx_refs;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

/* ---- fake dma-bufs ------------------------------------------------------------ */

int dvx_sim_dmabuf_export(struct dvx_sim_fabric *fab, void *addr, uint64_t len, int *fd)
{
	struct sim_fabric *f = sim_fab_of(fab);
	int rc;

	if (!fab || !addr || !len || !fd)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	rc = dvx_sim_dmabuf_new(f, addr, len, fd);
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int dvx_sim_dmabuf_release(struct dvx_sim_fabric *fab, int fd)
{
	struct sim_fabric *f = sim_fab_of(fab);
	struct sim_dmabuf *d;
	int rc = 0;

	if (!fab)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	d = dvx_sim_dmabuf_find(f, fd);
	if (!d)
		rc = -EBADF;
	else if (d->users)
		rc = -EBUSY;
	else
		memset(d, 0, sizeof(*d));
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int dvx_sim_fini(struct dvx_sim_fabric *fab)
{
	struct sim_fabric *f = sim_fab_of(fab);
	uint64_t unread;

	if (!fab)
		return -EINVAL;
	if (atomic_load(&f->thread_up))
		dvx_sim_stop(fab);
	unread = f->db_faults_unread;
	if (f->wire_ops)
		f->wire_ops->close(f);
	dvx_sim_gpu_release_all(f);
	if (f->kick_fd >= 0)
		close(f->kick_fd);	/* no poster of this fabric is left to kick */
	f->kick_fd = -1;
	pthread_mutex_destroy(&f->lock);
	f->nnics = 0;
	f->ngpus = 0;
	f->hal.nic = NULL;
	f->hal.host = NULL;
	f->hal.gpu = NULL;
	return unread ? -EPROTO : 0;
}

int dvx_sim_set_reorder(struct dvx_sim_fabric *fab, int on, uint64_t seed)
{
	struct sim_fabric *f = sim_fab_of(fab);

	if (!fab || (on != 0 && on != 1))
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	f->ro_on = (uint32_t)on;
	if (on)
		f->ro_rng = seed;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

int dvx_sim_set_db_mode(struct dvx_sim_fabric *fab, unsigned mode)
{
	struct sim_fabric *f = sim_fab_of(fab);

	if (!fab || (mode != DVX_SIM_DB_STRICT && mode != DVX_SIM_DB_LOOSE))
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	f->db_mode = mode;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

int dvx_sim_db_faults(struct dvx_sim_fabric *fab, struct dvx_sim_db_fault *first)
{
	struct sim_fabric *f = sim_fab_of(fab);
	uint64_t n;

	if (!fab)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	n = f->db_faults_unread;
	if (first) {
		if (n)
			*first = f->db_first;
		else
			memset(first, 0, sizeof(*first));
	}
	f->db_faults_unread = 0;
	memset(&f->db_first, 0, sizeof(f->db_first));
	pthread_mutex_unlock(&f->lock);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}
