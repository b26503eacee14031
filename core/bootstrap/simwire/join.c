// SPDX-License-Identifier: MIT
/*
 * core/bootstrap/simwire/join.c - dvx_bootstrap_wire_join(): the software NIC's wire set
 * up through a bootstrap (docs/sim-wire.md). The wire itself (hal/sim/wire.c) knows no
 * bootstrap: hal/ cannot include core/. This is the glue every process harness uses
 * (tools, benchmarks, tests, examples): listen, allgather the addresses and the NICs'
 * configurations, connect, add the remote NICs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>

#include <dvx/bootstrap/wire.h>
#include <dvx/hal.h>

/* what each rank tells the others (allgathered) */
struct join_rec {
	struct dvx_hal_sock_addr addr;
	uint32_t nnics;
	uint32_t rsvd;
	struct dvx_sim_nic_cfg nic[DVX_BOOTSTRAP_WIRE_MAX_NICS];
};

static size_t wire_bytes(int nranks, uint32_t max_msg)
{
	struct dvx_sim_wire_cfg wc;

	memset(&wc, 0, sizeof(wc));
	wc.nranks = nranks;
	wc.max_msg = max_msg;
	wc.max_remote_nics = (uint32_t)nranks * DVX_BOOTSTRAP_WIRE_MAX_NICS;
	return dvx_sim_wire_mem_size(&wc);
}

size_t dvx_bootstrap_wire_mem_size(int nranks, uint32_t max_msg)
{
	size_t w;

	if (nranks < 1 || nranks > DVX_SIM_WIRE_MAX_RANKS)
		return 0;
	w = wire_bytes(nranks, max_msg);
	if (!w)
		return 0;
	/* the wire's memory, then the allgathered records (8-byte aligned) */
	return ((w + 7) & ~(size_t)7) + 8 + (size_t)nranks * sizeof(struct join_rec);
}

/* Where this rank listens, from @spec (see struct dvx_bootstrap_wire_cfg.addr). */
static int bind_addr(const struct dvx_hal *hal, const char *spec, int rank,
		     struct dvx_hal_sock_addr *a)
{
	struct dvx_hal_host_ident id;
	char host[64];
	size_t n;
	int rc;

	memset(a, 0, sizeof(*a));
	if (!spec || !spec[0]) {
		/* one name per process and rank: the pid, and the clock against pid reuse */
		rc = dvx_hal_host_ident(hal, &id);
		if (rc)
			return rc;
		a->family = DVX_HAL_SOCK_ABSTRACT;
		snprintf(a->path, sizeof(a->path), "dvx-wire.%d.%d.%llx", (int)id.pid, rank,
			 (unsigned long long)dvx_hal_now_ns(hal));
		return 0;
	}
	if (!strncmp(spec, "unix:", 5)) {
		if (!spec[5] || snprintf(a->path, sizeof(a->path), "%s/wire.%d", spec + 5, rank) >=
		    (int)sizeof(a->path))
			return -EINVAL;
		a->family = DVX_HAL_SOCK_UNIX;
		return 0;
	}
	if (strncmp(spec, "tcp:", 4))
		return -EINVAL;
	spec += 4;
	n = strlen(spec);
	if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']') {
		if (n - 2 >= sizeof(host))
			return -EINVAL;
		memcpy(host, spec + 1, n - 2);
		host[n - 2] = 0;
		a->family = DVX_HAL_SOCK_IP6;
		return inet_pton(AF_INET6, host, a->ip) == 1 ? 0 : -EINVAL;
	}
	a->family = DVX_HAL_SOCK_IP4;
	return inet_pton(AF_INET, spec, a->ip) == 1 ? 0 : -EINVAL;
}

int dvx_bootstrap_wire_join(struct dvx_bootstrap *bs, const struct dvx_bootstrap_wire_cfg *attr,
			    void *mem, size_t len, uint64_t timeout_ns)
{
	const struct dvx_hal *hal;
	struct dvx_sim_wire_cfg wc;
	struct dvx_hal_sock_addr table_addr;
	struct join_rec *recs, *me;
	size_t wlen;
	uint64_t t0;
	int n, rank, r, rc;
	uint32_t i;

	if (!bs || !attr || !attr->fab || !mem)
		return -EINVAL;
	n = dvx_bootstrap_nranks(bs);
	rank = dvx_bootstrap_rank(bs);
	if (len < dvx_bootstrap_wire_mem_size(n, attr->max_msg))
		return -EINVAL;
	hal = attr->hal ? attr->hal : dvx_hal_host();
	wlen = wire_bytes(n, attr->max_msg);
	recs = (struct join_rec *)(void *)(((uintptr_t)mem + wlen + 7) & ~(uintptr_t)7);
	me = &recs[rank];
	memset(me, 0, sizeof(*me));
	rc = bind_addr(hal, attr->addr, rank, &table_addr);
	if (rc)
		return rc;
	for (i = 0; i < DVX_BOOTSTRAP_WIRE_MAX_NICS; i++)
		if (dvx_sim_nic_cfg_get(attr->fab, i, &me->nic[i]))
			break;
	me->nnics = i;
	if (i == DVX_BOOTSTRAP_WIRE_MAX_NICS) {
		struct dvx_sim_nic_cfg more;

		if (!dvx_sim_nic_cfg_get(attr->fab, i, &more))
			return -EINVAL;	/* more NICs than the exchange carries */
	}
	memset(&wc, 0, sizeof(wc));
	wc.rank = rank;
	wc.nranks = n;
	wc.max_msg = attr->max_msg;
	wc.max_remote_nics = (uint32_t)n * DVX_BOOTSTRAP_WIRE_MAX_NICS;
	wc.min_retry_ns = attr->min_retry_ns;
	wc.hal = hal;
	wc.ring_bytes = attr->ring_bytes == DVX_BOOTSTRAP_WIRE_NO_RING ? 0 :
			attr->ring_bytes ? attr->ring_bytes : DVX_BOOTSTRAP_WIRE_RING_DEFAULT;
	wc.stream_bytes = attr->stream_bytes;
	rc = dvx_sim_wire_init(attr->fab, &wc, mem, wlen);
	if (rc)
		return rc;
	t0 = dvx_hal_now_ns(hal);
	rc = dvx_sim_wire_listen(attr->fab, &table_addr, &me->addr);
	if (rc)
		goto fail;
	rc = dvx_bootstrap_allgather(bs, me, recs, sizeof(*me), timeout_ns);
	if (rc)
		goto fail;
	for (r = 0; r < n; r++)
		for (i = 0; r != rank && i < recs[r].nnics && i < DVX_BOOTSTRAP_WIRE_MAX_NICS; i++) {
			rc = dvx_sim_wire_add_remote_nic(attr->fab, r, &recs[r].nic[i]);
			if (rc)
				goto fail;
		}
	/* the addresses, packed for the wire in place: slot r lies at or before record r */
	for (r = 0; r < n; r++)
		memmove(&((struct dvx_hal_sock_addr *)(void *)recs)[r], &recs[r].addr,
			sizeof(recs[r].addr));
	rc = dvx_sim_wire_connect(attr->fab, (const struct dvx_hal_sock_addr *)(void *)recs,
				  timeout_ns - (dvx_hal_now_ns(hal) - t0 < timeout_ns ?
						dvx_hal_now_ns(hal) - t0 : timeout_ns));
	if (rc)
		goto fail;
	return 0;
fail:
	dvx_sim_wire_fini(attr->fab);
	return rc;
}
