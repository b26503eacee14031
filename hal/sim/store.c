// SPDX-License-Identifier: MIT
/*
 * hal/sim/store.c - what the software NIC's files look up: object ids and their
 * lookups, the fake dma-bufs, the GID tables, the routes between QPs, the clock. The
 * bottom of hal/sim: it calls nothing else of the folder (scripts/check-cycles.sh),
 * so commands (ctrl.c), execution (exec.c), the GPU side (gpu.c), the wire (wire.c)
 * and the progress loop (fabric.c) all stand on it.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "ctrl.h"

/* ---- GIDs ---------------------------------------------------------------------- */

static const struct dvx_sim_port_cfg *cfg_port(const struct dvx_sim_nic_cfg *c, unsigned port)
{
	return port >= 1 && port <= c->nports ? &c->port[port - 1] : NULL;
}

static uint32_t cfg_gid_tbl_len(const struct dvx_sim_nic_cfg *c, unsigned port)
{
	const struct dvx_sim_port_cfg *p = cfg_port(c, port);

	if (!p)
		return 0;
	return p->link_layer == DVX_LINK_LAYER_ETHERNET ? DVX_SIM_ROCE_GID_TBL_LEN : 1;
}

static bool cfg_gid_of(const struct dvx_sim_nic_cfg *c, unsigned port, uint32_t index,
		       uint8_t gid[16], uint8_t *type)
{
	const struct dvx_sim_port_cfg *p = cfg_port(c, port);

	if (!p || index >= cfg_gid_tbl_len(c, port))
		return false;
	memset(gid, 0, 16);
	if (p->link_layer == DVX_LINK_LAYER_IB) {
		/* the port GID: the default subnet prefix and the port GUID */
		gid[0] = 0xfe;
		gid[1] = 0x80;
		dvx_put_be64(gid + 8, c->node_guid + port - 1);
		*type = DVX_GID_TYPE_IB;
		return true;
	}
	if (index < 2) {
		/* link-local, modified EUI-64 from the MAC */
		gid[0] = 0xfe;
		gid[1] = 0x80;
		gid[8] = p->mac[0] ^ 0x02;
		gid[9] = p->mac[1];
		gid[10] = p->mac[2];
		gid[11] = 0xff;
		gid[12] = 0xfe;
		gid[13] = p->mac[3];
		gid[14] = p->mac[4];
		gid[15] = p->mac[5];
	} else {
		memcpy(gid, p->gid, 16);
	}
	*type = (index & 1) ? DVX_GID_TYPE_ROCE_V2 : DVX_GID_TYPE_ROCE_V1;
	return true;
}

bool dvx_sim_cfg_has_gid(const struct dvx_sim_nic_cfg *c, unsigned port, const uint8_t gid[16])
{
	uint32_t i, n = cfg_gid_tbl_len(c, port);
	uint8_t g[16], t;

	/* entries 2k and 2k + 1 hold one address (its RoCE v1 and v2 GIDs; an IB port has
	 * one entry): each address made and compared once */
	for (i = 0; i < n; i += 2)
		if (cfg_gid_of(c, port, i, g, &t) && !memcmp(g, gid, 16))
			return true;
	return false;
}

uint32_t dvx_sim_gid_tbl_len(const struct sim_nic *nic, unsigned port)
{
	return cfg_gid_tbl_len(&nic->cfg, port);
}

bool dvx_sim_gid_of(const struct sim_nic *nic, unsigned port, uint32_t index, uint8_t gid[16],
		    uint8_t *type)
{
	return cfg_gid_of(&nic->cfg, port, index, gid, type);
}

bool dvx_sim_port_has_gid(const struct sim_nic *nic, unsigned port, const uint8_t gid[16])
{
	return dvx_sim_cfg_has_gid(&nic->cfg, port, gid);
}

/* ---- ids and lookups ----------------------------------------------------------- */

uint32_t dvx_sim_make_id(struct sim_nic *nic, uint32_t slot, uint32_t cap, unsigned width)
{
	unsigned bits = sim_slot_bits(cap);
	uint64_t gmask = (width > bits) ? ((1ull << (width - bits)) - 1) : 0;
	uint64_t gen = (uint64_t)nic->next_id++ & gmask;

	return (uint32_t)((gen << bits) | (slot + 1));
}

#define FIND(tbl, field, cap, key)                                       \
	do {                                                             \
		uint32_t s_ = sim_id_slot((key), (cap));                 \
		if (!(key) || s_ == UINT32_MAX || (tbl)[s_].field != (key)) \
			return NULL;                                     \
		return &(tbl)[s_];                                       \
	} while (0)

struct sim_pd *dvx_sim_pd_find(struct sim_nic *nic, uint32_t pdn)
{
	FIND(nic->pds, pdn, nic->fab->cfg.max_pds, pdn);
}

struct sim_umem *dvx_sim_umem_find(struct sim_nic *nic, uint32_t id)
{
	FIND(nic->umems, id, nic->fab->cfg.max_umems, id);
}

struct sim_uar *dvx_sim_uar_find(struct sim_nic *nic, uint32_t page_id)
{
	FIND(nic->uars, page_id, nic->fab->cfg.max_uars, page_id);
}

struct sim_cq *dvx_sim_cq_find(struct sim_nic *nic, uint32_t cqn)
{
	cqn &= 0xffffff;
	FIND(nic->cqs, cqn, nic->fab->cfg.max_cqs, cqn);
}

struct sim_qp *dvx_sim_qp_find(struct sim_nic *nic, uint32_t qpn)
{
	qpn &= 0xffffff;
	FIND(nic->qps, qpn, nic->fab->cfg.max_qps, qpn);
}

struct sim_mr *dvx_sim_mr_find(struct sim_nic *nic, uint32_t key)
{
	uint32_t s = sim_id_slot(key >> 8, nic->fab->cfg.max_mrs);

	if (!key || s == UINT32_MAX || nic->mrs[s].lkey != key)
		return NULL;
	return &nic->mrs[s];
}

struct sim_dmabuf *dvx_sim_dmabuf_find(struct sim_fabric *fab, int fd)
{
	int64_t s = (int64_t)fd - DVX_SIM_DMABUF_FD_BASE;

	if (s < 0 || s >= (int64_t)fab->cfg.max_dmabufs || fab->dmabufs[s].fd != fd ||
	    fab->dmabufs[s].closed)
		return NULL;
	return &fab->dmabufs[s];
}

int dvx_sim_dmabuf_new(struct sim_fabric *f, uint8_t *base, uint64_t len, int *fd)
{
	uint32_t i;

	for (i = 0; i < f->cfg.max_dmabufs; i++) {
		struct sim_dmabuf *d = &f->dmabufs[i];

		if (d->fd)
			continue;
		memset(d, 0, sizeof(*d));
		d->fd = DVX_SIM_DMABUF_FD_BASE + (int32_t)i;
		d->base = base;
		d->len = len;
		*fd = d->fd;
		return 0;
	}
	return -ENOSPC;
}

void dvx_sim_dmabuf_put(struct sim_dmabuf *d)
{
	if (d->users)
		d->users--;
	if (!d->users && d->closed)
		memset(d, 0, sizeof(*d));
}

struct sim_qp *dvx_sim_qp_by_path(struct sim_fabric *fab, uint8_t link_layer, uint16_t lid,
				  const uint8_t gid[16], const uint8_t mac[6], uint32_t qpn)
{
	uint32_t i, p;

	for (i = 0; i < fab->nnics; i++) {
		struct sim_nic *n = &fab->nics[i];

		for (p = 1; p <= n->cfg.nports; p++) {
			const struct dvx_sim_port_cfg *pc = &n->cfg.port[p - 1];
			struct sim_qp *cand;

			if (pc->link_layer != link_layer)
				continue;
			if (pc->link_layer == DVX_LINK_LAYER_IB) {
				if (pc->lid != lid)
					continue;
			} else if (memcmp(pc->mac, mac, 6) || !dvx_sim_port_has_gid(n, p, gid)) {
				continue;	/* wrong GID or MAC: the frame goes nowhere */
			}
			cand = dvx_sim_qp_find(n, qpn);
			if (cand && cand->port == p)
				return cand;
		}
	}
	return NULL;
}

struct sim_qp *dvx_sim_qp_peer(struct sim_fabric *fab, struct sim_qp *qp)
{
	struct sim_qp *peer = NULL;

	qp->exec.w_rank = 0;
	if (!qp->port || qp->port > qp->nic->cfg.nports)
		goto out;
	if (qp->fl) {
		peer = dvx_sim_qp_find(qp->nic, qp->remote_qpn);
		goto out;
	}
	peer = dvx_sim_qp_by_path(fab, qp->nic->cfg.port[qp->port - 1].link_layer, qp->rlid,
				  qp->rgid, qp->rmac, qp->remote_qpn);
	/* not in this process: a NIC of another one, across the wire? */
	if (!peer && __builtin_expect(fab->wire_ops != NULL, 0))
		qp->exec.w_rank = fab->wire_ops->route(fab, qp);
out:
	qp->peer = peer;
	return peer;
}

uint64_t dvx_sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
