/* SPDX-License-Identifier: MIT */
/*
 * plugins/nccl/net.h - the plugin's version-neutral calls (net.c), which the exported
 * tables of every NCCL version (exports.c) adapt to. docs/nccl.md.
 */
#ifndef DVX_PLUGINS_NCCL_NET_H
#define DVX_PLUGINS_NCCL_NET_H

#include <stddef.h>
#include <stdint.h>

#include "abi.h"

/* the name NCCL_NET selects */
#define DVXN_NAME "dvx"

/* what getProperties reports, version-neutral */
struct dvxn_props {
	const char *name;
	const char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	uint64_t max_p2p_bytes;
	uint64_t max_coll_bytes;
};

/* init: @ctx NULL for v8-v10 (one process-wide instance), else v11's per-communicator
 * context; @version the table's version (for the telemetry) */
int dvxn_init(void **ctx, int version, uint64_t comm_id, dvx_nccl_log_fn log);
int dvxn_devices(int *ndev);
int dvxn_get_properties(int dev, struct dvxn_props *p);
int dvxn_listen(void *ctx, int dev, void *handle, void **listen_comm);
int dvxn_connect(void *ctx, int dev, void *handle, void **send_comm);
int dvxn_accept(void *listen_comm, void **recv_comm);
int dvxn_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle);
int dvxn_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
		       void **mhandle);
int dvxn_dereg_mr(void *comm, void *mhandle);
int dvxn_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle, void **request);
int dvxn_irecv(void *recv_comm, int n, void **data, const size_t *sizes, const int *tags,
	       void **mhandles, void **request);
int dvxn_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles, void **request);
int dvxn_test(void *request, int *done, int *sizes);
int dvxn_close_send(void *comm);
int dvxn_close_recv(void *comm);
int dvxn_close_listen(void *comm);
int dvxn_get_device_mr(void *comm, void *mhandle, void **dev_mhandle);
int dvxn_irecv_consumed(void *recv_comm, int n, void *request);
int dvxn_finalize(void *ctx);
int dvxn_set_net_attr(void *ctx, struct dvx_nccl_net_attr *attr);
/* the process-wide instance of v8-v10 (the one ctx NULL names) */
void *dvxn_global_ctx(void);
/* a size argument of v8 (int) that is negative: the caller's error */
int dvxn_bad_size(const char *call, int size);

#endif /* DVX_PLUGINS_NCCL_NET_H */
