/* SPDX-License-Identifier: MIT */
/*
 * tests/core/fixture.h - the mock ConnectX-7, mailbox capture and fault sweeps for
 * the core object tests.
 */
#ifndef DVX_TEST_CORE_FIXTURE_H
#define DVX_TEST_CORE_FIXTURE_H

#include <errno.h>

#include "../lib/dvx_test.h"
#include <dvx/testing/cx7.h>

#include <dvx/nic/nic.h>
#include <dvx/nic/umem.h>
#include <dvx/nic/mr.h>
#include <dvx/nic/cq.h>
#include <dvx/nic/qp.h>
#include <dvx/mlx5/cmd.h>
#include <dvx/mlx5/caps.h>

extern struct dvx_mock M;
extern const struct dvx_hal *HAL;

/* host memory for umems, MRs and sinks: 4 KiB aligned */
#define FX_MEM_BYTES (256u * 1024u)
extern uint8_t fx_mem[FX_MEM_BYTES];

/* a fresh mock with one ConnectX-7 "mlx5_0" at 0000:3b:00.0 (roce = 0: an IB port,
 * LID 0x11, caps port_type IB, no RoCE page) */
void fx_mock(int roce);
/* the device config of the mock's device 0, to adjust before fx_open() */
struct dvx_mock_nic_cfg *fx_cfg(void);
/* rewrite one capability page field of device 0: fx_cap(GENERAL, DVX_MLX5_CAP_CD, 0) */
void fx_cap_set(unsigned cap_type, unsigned byte, unsigned hi, unsigned lo, uint32_t v);
#define fx_cap(type, field, v) fx_cap_set(DVX_MLX5_CAP_TYPE_##type, field, v)
/* drop a capability page from device 0 */
void fx_cap_drop(unsigned cap_type);

/* open "mlx5_0" with defaults (log captured) */
int fx_open(struct dvx_nic *nic);
int fx_open_attr(struct dvx_nic *nic, uint8_t uar_pref, uint32_t required, int32_t gid_index);

/* the last log line the library produced */
extern char fx_log_last[512];
extern unsigned fx_log_count;
struct dvx_log fx_log(void);

/* mailboxes the hal received (through --wrap) */
const uint8_t *fx_mbox(unsigned opcode, unsigned nth);	/* nth (from 0) with that opcode */
const uint8_t *fx_mbox_last(unsigned opcode);
unsigned fx_mbox_count(unsigned opcode);
void fx_mbox_reset(void);
/* answers obj_query fills in: QUERY_QP state (-1: leave 0), QUERY_CQ producer counter */
extern int fx_qp_state_answer;
extern int64_t fx_cq_producer_answer;

/* a umem over fx_mem + off of len bytes */
void fx_umem(struct dvx_nic *nic, struct dvx_umem *u, uint64_t off, uint64_t len);

/* standard objects: CQ of 64 in umem at ring/dbr offsets */
void fx_cq_attr(struct dvx_cq_cfg *a, struct dvx_umem *u, uint64_t ring_off, uint64_t dbr_off,
		uint32_t depth);
void fx_qp_attr(struct dvx_qp_cfg *a, struct dvx_cq *cq, struct dvx_umem *u, uint64_t wq_off,
		uint64_t dbr_off);

/*
 * Fault sweep: for n = 1, 2, ... run @setup (no faults), arm fail_at(n) relative to the
 * log reset after setup, run @action, disarm. An action that fails must return a negative
 * errno and hold nothing more than after setup; @undo releases what a successful action
 * created, @teardown what setup created, and then everything the mock counts is 0.
 * Stops when the action made fewer than n calls. Returns the number of injected
 * failures that reached the action's error path.
 */
struct fx_sweep {
	void (*setup)(void *ctx);
	int (*action)(void *ctx);
	void (*undo)(void *ctx);
	void (*teardown)(void *ctx);
	void (*after_fail)(void *ctx, int err);	/* optional extra checks */
	void *ctx;
};
unsigned fx_sweep_calls(const struct fx_sweep *s);
/* the same with a DEVX status fault on @opcode (op_mod -1) instead: returns err */
int fx_sweep_devx(const struct fx_sweep *s, unsigned opcode);

#endif
