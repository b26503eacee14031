/* SPDX-License-Identifier: MIT */
/*
 * plugins/nccl/abi.h - the binary interface between NCCL and an external network plugin,
 * versions 8 to 11, as dvx's plugin implements it (docs/nccl.md has the tables).
 *
 * NCCL dlopen()s the plugin and looks up one data symbol per version, newest first
 * ("ncclNetPlugin_v11" ... "_v8"): a const table of a name and function pointers. The
 * layouts below are written from the documented member lists (order, C types) and
 * checked against the documented x86-64 sizes and offsets by the static assertions at
 * the end and by tests/nccl (nccl-net-test, test_abi_layout). Nothing here is NCCL's
 * text: the names are dvx's, the bytes are the ABI's.
 *
 * Every function returns an int result code (NCCL's enum is int-sized).
 */
#ifndef DVX_PLUGINS_NCCL_ABI_H
#define DVX_PLUGINS_NCCL_ABI_H

#include <stddef.h>
#include <stdint.h>

/* result codes */
enum {
	DVX_NCCL_OK = 0,
	DVX_NCCL_CUDA_ERROR = 1,
	DVX_NCCL_SYSTEM_ERROR = 2,	/* the kernel, a library, the network or the NIC failed */
	DVX_NCCL_INTERNAL_ERROR = 3,	/* the caller misused the plugin (bad arguments) */
	DVX_NCCL_INVALID_ARGUMENT = 4,
	DVX_NCCL_INVALID_USAGE = 5,	/* the user's configuration is wrong */
	DVX_NCCL_REMOTE_ERROR = 6,
	DVX_NCCL_IN_PROGRESS = 7,
};

/* log levels and subsystem flags of the logger NCCL passes to init */
enum {
	DVX_NCCL_LOG_NONE = 0,
	DVX_NCCL_LOG_VERSION = 1,
	DVX_NCCL_LOG_WARN = 2,
	DVX_NCCL_LOG_INFO = 3,
	DVX_NCCL_LOG_ABORT = 4,
	DVX_NCCL_LOG_TRACE = 5,
};
#define DVX_NCCL_LOGSYS_INIT 0x1ul
#define DVX_NCCL_LOGSYS_NET 0x10ul

/* memory kinds a device reaches (properties ptr_support; regMr's type) */
#define DVX_NCCL_PTR_HOST 0x1
#define DVX_NCCL_PTR_CUDA 0x2
#define DVX_NCCL_PTR_DMABUF 0x4

#define DVX_NCCL_HANDLE_BYTES 128	/* listen's handle, exchanged by NCCL */
#define DVX_NCCL_MAX_REQUESTS 32	/* requests in flight per comm (send: x max_recvs) */
#define DVX_NCCL_MAX_DEVS_PER_VDEV 4	/* physical devices of one virtual device (v9-v11) */
#define DVX_NCCL_RECV_OPTIONAL 0x1	/* *request preset before irecv: completion optional */
#define DVX_NCCL_MAX_NET_BYTES (1ull << 40)	/* upper bound of max_p2p/coll_bytes */
#define DVX_NCCL_DEV_HOST 0		/* properties dev_type: a host (proxy-driven) device */

/* the logger: level, subsystem flags, source file and line, printf format */
typedef void (*dvx_nccl_log_fn)(int level, unsigned long flags, const char *file, int line,
				const char *fmt, ...);
/* the profiler callback of v10 and v11 init (dvx does not call it) */
typedef int (*dvx_nccl_prof_fn)(void **event, int type, void *parent, int64_t plugin_id,
				void *ext);

/* a virtual device: the physical devices it merges (v9-v11); 20 bytes */
struct dvx_nccl_vdev {
	int ndevs;
	int devs[DVX_NCCL_MAX_DEVS_PER_VDEV];
};

/* per-communicator settings of v10 connect and v11 init */
struct dvx_nccl_comm_cfg {
	int traffic_class;	/* -1: undefined */
};

/* a device offload handle (v7-v11); NCCL passes NULL for host devices; 32 bytes */
struct dvx_nccl_dev_handle {
	int type;
	int version;
	void *handle;
	size_t size;
	int needs_proxy_progress;
};

/* v11 setNetAttr: hints about peers and flows (-1 undefined) */
struct dvx_nccl_comm_attr {
	int32_t max_peers;
	int32_t min_peers;
	int32_t max_flows;
	int32_t min_flows;
};

struct dvx_nccl_net_attr {
	struct dvx_nccl_comm_attr send;
	struct dvx_nccl_comm_attr recv;
	uint32_t op;
	uint32_t algo;
	uint32_t proto;
};

/* device properties, v8: 64 bytes */
struct dvx_nccl_props_v8 {
	char *name;		/* unique per device: NCCL's topology looks it up by name */
	char *pci_path;		/* sysfs path of the PCI function; NULL: hangs off the CPU */
	uint64_t guid;		/* devices of one guid are one port */
	int ptr_support;	/* DVX_NCCL_PTR_* */
	int reg_is_global;	/* a registration is not tied to its comm */
	int speed;		/* Mbps */
	int port;
	float latency;		/* microseconds; 0: NCCL's default */
	int max_comms;		/* also the device's channel limit */
	int max_recvs;		/* largest grouped irecv */
	int dev_type;		/* DVX_NCCL_DEV_HOST */
	int dev_version;	/* 0 for host devices */
};

/* device properties, v9 and v10 (same bytes): 104 bytes */
struct dvx_nccl_props_v9 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush;	/* flush every GPU-direct receive */
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int dev_type;
	int dev_version;
	struct dvx_nccl_vdev vdev;	/* {1, {dev}} for a physical device */
	size_t max_p2p_bytes;	/* in (0, DVX_NCCL_MAX_NET_BYTES] */
	size_t max_coll_bytes;
};

/* device properties, v11: v9's and the largest multi-request; 112 bytes */
struct dvx_nccl_props_v11 {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int dev_type;
	int dev_version;
	struct dvx_nccl_vdev vdev;
	size_t max_p2p_bytes;
	size_t max_coll_bytes;
	int max_multi_request;
};

/* the table of version 8: 19 members, 152 bytes */
struct dvx_nccl_net_v8 {
	const char *name;
	int (*init)(dvx_nccl_log_fn log);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct dvx_nccl_props_v8 *props);
	int (*listen)(int dev, void *handle, void **listen_comm);
	int (*connect)(int dev, void *handle, void **send_comm, struct dvx_nccl_dev_handle **dev_comm);
	int (*accept)(void *listen_comm, void **recv_comm, struct dvx_nccl_dev_handle **dev_comm);
	int (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, int size, int tag, void *mhandle, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, int *sizes, int *tags, void **mhandles,
		     void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	int (*get_device_mr)(void *comm, void *mhandle, void **dev_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
};

/* version 9: size_t sizes in isend/irecv, virtual devices; 20 members, 160 bytes */
struct dvx_nccl_net_v9 {
	const char *name;
	int (*init)(dvx_nccl_log_fn log);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct dvx_nccl_props_v9 *props);
	int (*listen)(int dev, void *handle, void **listen_comm);
	int (*connect)(int dev, void *handle, void **send_comm, struct dvx_nccl_dev_handle **dev_comm);
	int (*accept)(void *listen_comm, void **recv_comm, struct dvx_nccl_dev_handle **dev_comm);
	int (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		     void **request);
	int (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		     void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	int (*get_device_mr)(void *comm, void *mhandle, void **dev_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
	int (*make_vdevice)(int *dev, struct dvx_nccl_vdev *props);
};

/* version 10: init takes the profiler, connect a comm config, isend/irecv profiler
 * handles; 20 members, 160 bytes */
struct dvx_nccl_net_v10 {
	const char *name;
	int (*init)(dvx_nccl_log_fn log, dvx_nccl_prof_fn prof);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct dvx_nccl_props_v9 *props);
	int (*listen)(int dev, void *handle, void **listen_comm);
	int (*connect)(int dev, struct dvx_nccl_comm_cfg *cfg, void *handle, void **send_comm,
		       struct dvx_nccl_dev_handle **dev_comm);
	int (*accept)(void *listen_comm, void **recv_comm, struct dvx_nccl_dev_handle **dev_comm);
	int (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		     void *phandle, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		     void **phandles, void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	int (*get_device_mr)(void *comm, void *mhandle, void **dev_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
	int (*make_vdevice)(int *dev, struct dvx_nccl_vdev *props);
};

/* version 11: a context per communicator (init, listen, connect), finalize and
 * setNetAttr; 22 members, 176 bytes */
struct dvx_nccl_net_v11 {
	const char *name;
	int (*init)(void **ctx, uint64_t comm_id, struct dvx_nccl_comm_cfg *cfg, dvx_nccl_log_fn log,
		    dvx_nccl_prof_fn prof);
	int (*devices)(int *ndev);
	int (*get_properties)(int dev, struct dvx_nccl_props_v11 *props);
	int (*listen)(void *ctx, int dev, void *handle, void **listen_comm);
	int (*connect)(void *ctx, int dev, void *handle, void **send_comm,
		       struct dvx_nccl_dev_handle **dev_comm);
	int (*accept)(void *listen_comm, void **recv_comm, struct dvx_nccl_dev_handle **dev_comm);
	int (*reg_mr)(void *comm, void *data, size_t size, int type, void **mhandle);
	int (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mhandle);
	int (*dereg_mr)(void *comm, void *mhandle);
	int (*isend)(void *send_comm, void *data, size_t size, int tag, void *mhandle,
		     void *phandle, void **request);
	int (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags, void **mhandles,
		     void **phandles, void **request);
	int (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
		      void **request);
	int (*test)(void *request, int *done, int *sizes);
	int (*close_send)(void *send_comm);
	int (*close_recv)(void *recv_comm);
	int (*close_listen)(void *listen_comm);
	int (*get_device_mr)(void *comm, void *mhandle, void **dev_mhandle);
	int (*irecv_consumed)(void *recv_comm, int n, void *request);
	int (*make_vdevice)(int *dev, struct dvx_nccl_vdev *props);
	int (*finalize)(void *ctx);
	int (*set_net_attr)(void *ctx, struct dvx_nccl_net_attr *attr);
};

#if defined(__x86_64__) || defined(__aarch64__)
/* the documented LP64 sizes; tests/nccl checks every member offset as well */
_Static_assert(sizeof(struct dvx_nccl_vdev) == 20, "vdev");
_Static_assert(sizeof(struct dvx_nccl_dev_handle) == 32, "dev handle");
_Static_assert(sizeof(struct dvx_nccl_props_v8) == 64, "props v8");
_Static_assert(sizeof(struct dvx_nccl_props_v9) == 104, "props v9/v10");
_Static_assert(sizeof(struct dvx_nccl_props_v11) == 112, "props v11");
_Static_assert(offsetof(struct dvx_nccl_props_v11, max_p2p_bytes) == 88, "props v11 p2p");
_Static_assert(sizeof(struct dvx_nccl_net_v8) == 152, "net v8");
_Static_assert(sizeof(struct dvx_nccl_net_v9) == 160, "net v9");
_Static_assert(sizeof(struct dvx_nccl_net_v10) == 160, "net v10");
_Static_assert(sizeof(struct dvx_nccl_net_v11) == 176, "net v11");
#endif

#endif /* DVX_PLUGINS_NCCL_ABI_H */
