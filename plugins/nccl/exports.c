// SPDX-License-Identifier: MIT
/*
 * plugins/nccl/exports.c - the tables NCCL looks up, newest first: ncclNetPlugin_v11 ...
 * ncclNetPlugin_v8, each an adapter over the version-neutral calls of net.c
 * (docs/nccl.md). These four symbols are all the library exports (exports.map).
 */
#include <string.h>

#include <dvx/msg/msg.h>

#include "abi.h"
#include "net.h"

/* ---- properties ---- */
static void props_v9(int dev, const struct dvxn_props *p, struct dvx_nccl_props_v9 *o)
{
	memset(o, 0, sizeof(*o));
	o->name = (char *)p->name;
	o->pci_path = (char *)p->pci_path;
	o->guid = p->guid;
	o->ptr_support = p->ptr_support;
	o->reg_is_global = p->reg_is_global;
	o->force_flush = p->force_flush;
	o->speed = p->speed;
	o->port = p->port;
	o->latency = p->latency;
	o->max_comms = p->max_comms;
	o->max_recvs = p->max_recvs;
	o->dev_type = DVX_NCCL_DEV_HOST;
	o->dev_version = 0;
	o->vdev.ndevs = 1;
	o->vdev.devs[0] = dev;
	o->max_p2p_bytes = p->max_p2p_bytes;
	o->max_coll_bytes = p->max_coll_bytes;
}

static int get_properties_v11(int dev, struct dvx_nccl_props_v11 *o)
{
	struct dvx_nccl_props_v9 v9;
	struct dvxn_props p;
	int rc = dvxn_get_properties(dev, &p);

	if (rc || !o)
		return rc ? rc : DVX_NCCL_INTERNAL_ERROR;
	props_v9(dev, &p, &v9);
	memset(o, 0, sizeof(*o));
	o->name = v9.name;
	o->pci_path = v9.pci_path;
	o->guid = v9.guid;
	o->ptr_support = v9.ptr_support;
	o->reg_is_global = v9.reg_is_global;
	o->force_flush = v9.force_flush;
	o->speed = v9.speed;
	o->port = v9.port;
	o->latency = v9.latency;
	o->max_comms = v9.max_comms;
	o->max_recvs = v9.max_recvs;
	o->dev_type = v9.dev_type;
	o->dev_version = v9.dev_version;
	o->vdev = v9.vdev;
	o->max_p2p_bytes = v9.max_p2p_bytes;
	o->max_coll_bytes = v9.max_coll_bytes;
	o->max_multi_request = 1;
	return 0;
}

static int get_properties_v9(int dev, struct dvx_nccl_props_v9 *o)
{
	struct dvxn_props p;
	int rc = dvxn_get_properties(dev, &p);

	if (rc || !o)
		return rc ? rc : DVX_NCCL_INTERNAL_ERROR;
	props_v9(dev, &p, o);
	return 0;
}

static int get_properties_v8(int dev, struct dvx_nccl_props_v8 *o)
{
	struct dvxn_props p;
	int rc = dvxn_get_properties(dev, &p);

	if (rc || !o)
		return rc ? rc : DVX_NCCL_INTERNAL_ERROR;
	memset(o, 0, sizeof(*o));
	o->name = (char *)p.name;
	o->pci_path = (char *)p.pci_path;
	o->guid = p.guid;
	o->ptr_support = p.ptr_support;
	o->reg_is_global = p.reg_is_global;
	o->speed = p.speed;
	o->port = p.port;
	o->latency = p.latency;
	o->max_comms = p.max_comms;
	o->max_recvs = p.max_recvs;
	o->dev_type = DVX_NCCL_DEV_HOST;
	o->dev_version = 0;
	return 0;
}

/* ---- init ---- */
static int init_v11(void **ctx, uint64_t comm_id, struct dvx_nccl_comm_cfg *cfg,
		    dvx_nccl_log_fn log, dvx_nccl_prof_fn prof)
{
	if (!ctx)
		return DVX_NCCL_INTERNAL_ERROR;
	return dvxn_init(ctx, 11, comm_id, log);
}

static int init_v10(dvx_nccl_log_fn log, dvx_nccl_prof_fn prof)
{
	return dvxn_init(NULL, 10, 0, log);
}

static int init_v9(dvx_nccl_log_fn log)
{
	return dvxn_init(NULL, 9, 0, log);
}

static int init_v8(dvx_nccl_log_fn log)
{
	return dvxn_init(NULL, 8, 0, log);
}

/* ---- listen, connect, accept ---- */
static int listen_v11(void *ctx, int dev, void *handle, void **listen_comm)
{
	return dvxn_listen(ctx, dev, handle, listen_comm);
}

static int listen_old(int dev, void *handle, void **listen_comm)
{
	return dvxn_listen(NULL, dev, handle, listen_comm);
}

/* the device handle: NULL, or a pointer to NULL for host devices (the GDR probe passes
 * NULL itself); dvx makes no device handles */
static void no_dev_handle(struct dvx_nccl_dev_handle **dev_comm)
{
	if (dev_comm)
		*dev_comm = NULL;
}

static int connect_v11(void *ctx, int dev, void *handle, void **send_comm,
		       struct dvx_nccl_dev_handle **dev_comm)
{
	no_dev_handle(dev_comm);
	return dvxn_connect(ctx, dev, handle, send_comm);
}

static int connect_v10(int dev, struct dvx_nccl_comm_cfg *cfg, void *handle, void **send_comm,
		       struct dvx_nccl_dev_handle **dev_comm)
{
	no_dev_handle(dev_comm);
	return dvxn_connect(NULL, dev, handle, send_comm);
}

static int connect_old(int dev, void *handle, void **send_comm,
		       struct dvx_nccl_dev_handle **dev_comm)
{
	no_dev_handle(dev_comm);
	return dvxn_connect(NULL, dev, handle, send_comm);
}

static int accept_any(void *listen_comm, void **recv_comm, struct dvx_nccl_dev_handle **dev_comm)
{
	no_dev_handle(dev_comm);
	return dvxn_accept(listen_comm, recv_comm);
}

/* ---- data ---- */
static int isend_v10(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		     void *phandle, void **request)
{
	return dvxn_isend(send_comm, data, size, tag, mhandle, request);
}

static int isend_v9(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		    void **request)
{
	return dvxn_isend(send_comm, data, size, tag, mhandle, request);
}

static int isend_v8(void *send_comm, void *data, int size, int tag, void *mhandle,
		    void **request)
{
	if (size < 0)
		return dvxn_bad_size("isend", size);
	return dvxn_isend(send_comm, data, (size_t)size, tag, mhandle, request);
}

static int irecv_v10(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
		     void **mhandles, void **phandles, void **request)
{
	return dvxn_irecv(recv_comm, n, data, sizes, tags, mhandles, request);
}

static int irecv_v9(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
		    void **mhandles, void **request)
{
	return dvxn_irecv(recv_comm, n, data, sizes, tags, mhandles, request);
}

static int irecv_v8(void *recv_comm, int n, void **data, int *sizes, int *tags, void **mhandles,
		    void **request)
{
	size_t sz[DVX_MSG_MAX_RECVS];
	int i;

	if (request)
		*request = NULL;
	if (n < 1 || n > DVX_MSG_MAX_RECVS || !sizes)
		return dvxn_irecv(recv_comm, n, data, NULL, tags, mhandles, request);
	for (i = 0; i < n; i++) {
		if (sizes[i] < 0)
			return dvxn_bad_size("irecv", sizes[i]);
		sz[i] = (size_t)sizes[i];
	}
	return dvxn_irecv(recv_comm, n, data, sz, tags, mhandles, request);
}

static int finalize_v11(void *ctx)
{
	return dvxn_finalize(ctx);
}

static int set_net_attr_v11(void *ctx, struct dvx_nccl_net_attr *attr)
{
	return dvxn_set_net_attr(ctx, attr);
}

#define DVXN_EXPORT __attribute__((visibility("default")))

DVXN_EXPORT extern const struct dvx_nccl_net_v11 ncclNetPlugin_v11;
DVXN_EXPORT extern const struct dvx_nccl_net_v10 ncclNetPlugin_v10;
DVXN_EXPORT extern const struct dvx_nccl_net_v9 ncclNetPlugin_v9;
DVXN_EXPORT extern const struct dvx_nccl_net_v8 ncclNetPlugin_v8;

const struct dvx_nccl_net_v11 ncclNetPlugin_v11 = {
	.name = DVXN_NAME,
	.init = init_v11,
	.devices = dvxn_devices,
	.get_properties = get_properties_v11,
	.listen = listen_v11,
	.connect = connect_v11,
	.accept = accept_any,
	.reg_mr = dvxn_reg_mr,
	.reg_mr_dmabuf = dvxn_reg_mr_dmabuf,
	.dereg_mr = dvxn_dereg_mr,
	.isend = isend_v10,
	.irecv = irecv_v10,
	.iflush = dvxn_iflush,
	.test = dvxn_test,
	.close_send = dvxn_close_send,
	.close_recv = dvxn_close_recv,
	.close_listen = dvxn_close_listen,
	.get_device_mr = dvxn_get_device_mr,
	.irecv_consumed = dvxn_irecv_consumed,
	.make_vdevice = NULL,	/* NCCL then uses the physical devices only */
	.finalize = finalize_v11,
	.set_net_attr = set_net_attr_v11,
};

const struct dvx_nccl_net_v10 ncclNetPlugin_v10 = {
	.name = DVXN_NAME,
	.init = init_v10,
	.devices = dvxn_devices,
	.get_properties = get_properties_v9,
	.listen = listen_old,
	.connect = connect_v10,
	.accept = accept_any,
	.reg_mr = dvxn_reg_mr,
	.reg_mr_dmabuf = dvxn_reg_mr_dmabuf,
	.dereg_mr = dvxn_dereg_mr,
	.isend = isend_v10,
	.irecv = irecv_v10,
	.iflush = dvxn_iflush,
	.test = dvxn_test,
	.close_send = dvxn_close_send,
	.close_recv = dvxn_close_recv,
	.close_listen = dvxn_close_listen,
	.get_device_mr = dvxn_get_device_mr,
	.irecv_consumed = dvxn_irecv_consumed,
	.make_vdevice = NULL,
};

const struct dvx_nccl_net_v9 ncclNetPlugin_v9 = {
	.name = DVXN_NAME,
	.init = init_v9,
	.devices = dvxn_devices,
	.get_properties = get_properties_v9,
	.listen = listen_old,
	.connect = connect_old,
	.accept = accept_any,
	.reg_mr = dvxn_reg_mr,
	.reg_mr_dmabuf = dvxn_reg_mr_dmabuf,
	.dereg_mr = dvxn_dereg_mr,
	.isend = isend_v9,
	.irecv = irecv_v9,
	.iflush = dvxn_iflush,
	.test = dvxn_test,
	.close_send = dvxn_close_send,
	.close_recv = dvxn_close_recv,
	.close_listen = dvxn_close_listen,
	.get_device_mr = dvxn_get_device_mr,
	.irecv_consumed = dvxn_irecv_consumed,
	.make_vdevice = NULL,
};

const struct dvx_nccl_net_v8 ncclNetPlugin_v8 = {
	.name = DVXN_NAME,
	.init = init_v8,
	.devices = dvxn_devices,
	.get_properties = get_properties_v8,
	.listen = listen_old,
	.connect = connect_old,
	.accept = accept_any,
	.reg_mr = dvxn_reg_mr,
	.reg_mr_dmabuf = dvxn_reg_mr_dmabuf,
	.dereg_mr = dvxn_dereg_mr,
	.isend = isend_v8,
	.irecv = irecv_v8,
	.iflush = dvxn_iflush,
	.test = dvxn_test,
	.close_send = dvxn_close_send,
	.close_recv = dvxn_close_recv,
	.close_listen = dvxn_close_listen,
	.get_device_mr = dvxn_get_device_mr,
	.irecv_consumed = dvxn_irecv_consumed,
};
