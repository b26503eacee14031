/* SPDX-License-Identifier: MIT */
/*
 * dvx/nic/nic.h - an opened mlx5 NIC: capabilities, port, GID, PD, EQ and UARs.
 *
 * struct dvx_nic lives in caller storage. dvx_nic_open() opens the device through the
 * hal instance the caller hands in (by ibdev name or PCI address), reads the
 * capability pages it needs (QUERY_HCA_CAP general, atomic, RoCE, general 2 as the
 * device announces them), the port and the GID to use, allocates a PD, finds an EQ
 * number and allocates the NIC's default UAR. Everything the other core objects
 * (dvx_umem, dvx_mr, dvx_cq, dvx_qp) need comes from here. dvx_nic_close() releases
 * in reverse order and refuses (-EBUSY) while objects created on the NIC still live.
 *
 * Errors: 0 or a negative errno; the reason is in nic->hal.diag (the failed operation
 * by name, e.g. "CREATE_QP: BAD_PARAM syndrome 0x..."), and goes to the log callback
 * given at open. Nothing is printed, nothing is allocated.
 *
 * Concurrency: the control path of one NIC (open, close, object create/destroy,
 * connect) runs on one thread at a time.
 */
#ifndef DVX_NIC_H
#define DVX_NIC_H

#include <dvx/hal.h>
#include <dvx/mlx5/caps.h>

DVX_BEGIN_DECLS

/**
 * enum dvx_nic_feature - what a device can do, as dvx decides it from the caps.
 * @DVX_NIC_FEAT_CD:		core-direct (WAIT/SEND_EN/RECV_EN, cd_* QP bits): cap cd
 * @DVX_NIC_FEAT_ATOMIC:	8-byte compare-swap and fetch-add on RC QPs
 * @DVX_NIC_FEAT_ATOMIC_HOST_ENDIAN: 8-byte atomic results come back in host byte order
 *				(atomic_req_8B_endianness_mode = 1); without it the device
 *				runs in big-endian atomic mode
 * @DVX_NIC_FEAT_EXT_ATOMIC:	masked (extended) atomics of 4 and 8 bytes
 * @DVX_NIC_FEAT_LOOPBACK:	force-loopback RC QPs (roce cap fl_rc_qp_when_roce_*)
 * @DVX_NIC_FEAT_RELAXED_ORDERING: relaxed-ordering MRs (cap relaxed_ordering_write/read)
 * @DVX_NIC_FEAT_BF:		BlueFlame UARs
 * @DVX_NIC_FEAT_CQ_OI:		overrun-ignore CQs (cap cq_oi)
 */
enum dvx_nic_feature {
	DVX_NIC_FEAT_CD = 1u << 0,
	DVX_NIC_FEAT_ATOMIC = 1u << 1,
	DVX_NIC_FEAT_ATOMIC_HOST_ENDIAN = 1u << 2,
	DVX_NIC_FEAT_EXT_ATOMIC = 1u << 3,
	DVX_NIC_FEAT_LOOPBACK = 1u << 4,
	DVX_NIC_FEAT_RELAXED_ORDERING = 1u << 5,
	DVX_NIC_FEAT_BF = 1u << 6,
	DVX_NIC_FEAT_CQ_OI = 1u << 7,
};

/**
 * enum dvx_uar_pref - which UAR register to ask for.
 * @DVX_UAR_PREF_NC:		a dedicated non-cached register; if the device (or the
 *				rdma-core release) cannot give one, the shared non-cached
 *				one (the per-context singleton). The default.
 * @DVX_UAR_PREF_NC_SHARED:	the shared non-cached register only
 * @DVX_UAR_PREF_BF:		a BlueFlame register (write-combining); -EOPNOTSUPP when
 *				the device has no BlueFlame
 * @DVX_UAR_PREF_BF_OR_NC:	BlueFlame when the device has it and the allocation
 *				succeeds, else as DVX_UAR_PREF_NC (dvx_uar.fallback_err
 *				keeps the BlueFlame allocation's error)
 */
enum dvx_uar_pref {
	DVX_UAR_PREF_NC = 0,
	DVX_UAR_PREF_NC_SHARED = 1,
	DVX_UAR_PREF_BF = 2,
	DVX_UAR_PREF_BF_OR_NC = 3,
};

struct dvx_nic;

/**
 * struct dvx_uar - a UAR register, in caller storage.
 * @hal:	the hal's handle
 * @nic:	the NIC it belongs to
 * @reg:	where doorbells (8-byte stores or BlueFlame copies) are written
 * @page_id:	goes into cqc.uar_page / qpc.uar_page
 * @type:	enum dvx_uar_type obtained
 * @bf_half:	bytes of one BlueFlame half (bf_reg_size / 2); 0 for a non-cached UAR, also
 *		one asked for as BlueFlame that the kernel mapped non-cached (hal.nc)
 * @users:	CQs and QPs using it; dvx_uar_free() refuses while non-zero
 * @fallback_err: when DVX_UAR_PREF_NC fell back to the shared register, the error the
 *		dedicated allocation returned; when DVX_UAR_PREF_BF_OR_NC fell back to a
 *		non-cached one, the BlueFlame allocation's; else 0
 * @live:	DVX_LIVE between alloc and free (a create into a live object is -EBUSY)
 * @qps:	QPs ringing it
 *
 * Sharing a non-cached register between QPs (a companion QP shares its main QP's) is
 * allowed: 8-byte doorbells need no common lock. A BlueFlame register serves one QP
 * (BlueFlame copies and other QPs' doorbells on one write-combining register would
 * need a lock every sharer takes, docs/prm.md 3.4): a second QP on a caller's
 * BlueFlame UAR is refused, and QPs on the NIC's default register (shared by every QP
 * that names none) ring plain doorbells even when it is BlueFlame.
 */
struct dvx_uar {
	struct dvx_hal_uar hal;
	struct dvx_nic *nic;
	uint8_t *reg;
	uint32_t page_id;
	uint32_t type;
	uint32_t bf_half;
	uint32_t users;
	int32_t fallback_err;
	uint32_t live;
	uint32_t qps;
	uint32_t rsvd;
};

/**
 * struct dvx_nic_cfg - how to open a NIC.
 * @name:	ibdev name ("mlx5_0") or PCI address ("0000:3b:00.0", "3b:00.0")
 * @port:	1-based port to use; 0 means 1
 * @uar_pref:	enum dvx_uar_pref for the NIC's default UAR
 * @gid_index:	with DVX_NIC_CFG_F_GID_INDEX in @flags, the GID table index to use on
 *		RoCE; without it ignored and the GID chosen (RoCE v2 preferred, routable
 *		before link-local, lowest index first): a zeroed struct chooses
 * @required:	DVX_NIC_FEAT_* the caller's features need; open fails with
 *		-EOPNOTSUPP, naming the first one missing, without them
 * @flags:	DVX_NIC_CFG_F_*
 * @log:	optional log sink (kept in nic->hal.log); zero for silence
 *
 * Zero means the default for every field (only @name is required).
 */
struct dvx_nic_cfg {
	const char *name;
	uint8_t port;
	uint8_t uar_pref;
	uint16_t rsvd;
	int32_t gid_index;
	uint32_t required;
	uint32_t flags;
	struct dvx_log log;
};

/* struct dvx_nic_cfg.flags */
enum {
	DVX_NIC_CFG_F_GID_INDEX = 1u << 0,	/* @gid_index is the caller's choice */
};

/**
 * struct dvx_nic - an opened NIC, in caller storage. Read-only for the caller.
 * @hal:	the hal handle of the NIC (hal.diag holds the last failure, hal.log the log sink)
 * @attr:	ibv_query_device's answer
 * @caps:	the capability pages read (see the *_valid flags)
 * @port_attr:	the port's attributes at open
 * @gid:	the GID this NIC uses (RoCE: the chosen entry; IB: index 0)
 * @pd:		the protection domain
 * @uar:	the default UAR (CQs, and QPs that are given no UAR of their own)
 * @features:	DVX_NIC_FEAT_* the device supports
 * @pdn:	PD number (qpc.pd)
 * @eqn:	completion EQ number (cqc.c_eqn)
 * @gid_index:	index of @gid
 * @lid:	port LID (IB)
 * @port:	1-based port
 * @link_layer:	enum dvx_link_layer of the port
 * @roce:	1 when the port is Ethernet (RoCE), 0 for InfiniBand
 * @mtu:	active MTU of the port (IB enum 1..5)
 * @port_state:	port state at open (4 = active)
 * @atomic_mode: qpc.atomic_mode dvx uses for remote atomics (enum
 *		dvx_mlx5_atomic_mode: 3 with extended atomics, 1 with standard ones,
 *		0 without atomics)
 * @atomic_be_results: 1 when 8-byte atomic results arrive big-endian
 * @nobjs:	UARs, umems, MRs, CQs and QPs alive on this NIC
 * @open:	DVX_LIVE between open and close (an open into an open one is -EBUSY)
 */
struct dvx_nic {
	struct dvx_hal_nic hal;
	struct dvx_hal_nic_attr attr;
	struct dvx_mlx5_caps caps;
	struct dvx_hal_port_attr port_attr;
	struct dvx_hal_gid gid;
	struct dvx_hal_pd pd;
	struct dvx_uar uar;
	uint32_t features;
	uint32_t pdn;
	uint32_t eqn;
	uint32_t gid_index;
	uint16_t lid;
	uint8_t port;
	uint8_t link_layer;
	uint8_t roce;
	uint8_t mtu;
	uint8_t port_state;
	uint8_t atomic_mode;
	uint8_t atomic_be_results;
	uint8_t rsvd[3];
	uint32_t nobjs;
	uint32_t open;
};

/**
 * dvx_nic_open() - open a NIC and set up what every object on it needs.
 * @nic:	caller storage, overwritten (nic->hal.diag is valid even on failure)
 * @hal:	the backend instance to drive it through
 * @attr:	device name, port, UAR preference, required features, log sink
 *
 * Calls, in order: dev_open, query_device, QUERY_HCA_CAP general (then atomic, RoCE
 * and general 2 when the general page announces them), query_port, query_gid (RoCE:
 * the table, or the given index), pd_alloc, eqn_query(0), uar_alloc. Checks that the
 * device does RC, has the features in @attr->required, and that the port exists.
 *
 * Context: control path. Return: 0; -EINVAL (bad argument, no such port, bad GID
 * index); -ENODEV (no such device, or not mlx5); -EOPNOTSUPP (no RC, a required
 * feature missing, no usable GID); or the failed call's error. On failure everything
 * acquired is released and nic->open is 0.
 */
int dvx_nic_open(struct dvx_nic *nic, const struct dvx_hal *hal, const struct dvx_nic_cfg *attr);

/**
 * dvx_nic_close() - release the UAR, the PD and the device, in that order.
 * @nic:	an open NIC
 *
 * Context: control path. Return: 0; -EINVAL (not open); -EBUSY (objects created on
 * it still live: nothing is released); or the error of a failed release, in which
 * case what was released stays released and the NIC stays open for another try.
 */
int dvx_nic_close(struct dvx_nic *nic);

/**
 * dvx_nic_require() - check that the NIC has @features.
 * @nic:	an open NIC
 * @features:	DVX_NIC_FEAT_* bits
 * @what:	what needs them (for the message), or NULL
 *
 * Return: 0, or -EOPNOTSUPP with nic->hal.diag naming the first missing feature
 * (e.g. "... 8-byte atomics run in big-endian atomic mode ...: not usable").
 */
int dvx_nic_require(struct dvx_nic *nic, uint32_t features, const char *what);

/** dvx_nic_feature_name() - "core-direct", "atomic", ... for one DVX_NIC_FEAT_* bit. */
const char *dvx_nic_feature_name(uint32_t feature);

/**
 * dvx_uar_alloc() - allocate a UAR register of the preferred kind.
 * @nic:	an open NIC
 * @pref:	enum dvx_uar_pref
 * @uar:	caller storage, overwritten
 *
 * Context: control path. Return: 0, -EINVAL, -EOPNOTSUPP (BlueFlame asked for on a
 * device without it), or the hal's error. @uar->type says what was obtained.
 */
int dvx_uar_alloc(struct dvx_nic *nic, enum dvx_uar_pref pref, struct dvx_uar *uar);

/**
 * dvx_uar_free() - free a UAR register.
 * Return: 0; -EINVAL (not allocated); -EBUSY (CQs or QPs still use it); or the hal's
 * error (the UAR stays allocated).
 */
int dvx_uar_free(struct dvx_uar *uar);

DVX_END_DECLS

#endif /* DVX_NIC_H */
