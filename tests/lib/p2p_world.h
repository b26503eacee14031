/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/p2p_world.h - N ranks as threads, each with its own simulated NIC on one
 * fabric, a thread bootstrap and a P2P transport; used by the transport's tests and
 * its benchmark. The ranks' buffers:
 *
 *   data:  2 * nranks slots of slot_bytes: rank r's puts land in slot r at the
 *          receiver; slot nranks + p is this rank's send area for peer p
 *   sig:   nranks * nslots signal words: rank r raises (r, s) at the receiver
 *   ctr:   nranks * nslots counter words: raised locally by puts to peer r
 */
#ifndef DVX_TESTS_P2P_WORLD_H
#define DVX_TESTS_P2P_WORLD_H

#include <pthread.h>

#include <dvx/testing/sim.h>
#include <dvx/p2p/setup.h>

#define W_MAX_RANKS 8

struct world;

struct wrank {
	struct world *w;
	int rank;
	pthread_t thread;
	struct dvx_nic nic;
	struct dvx_bootstrap bs;
	struct dvx_p2p t;
	void *state, *rings;
	uint8_t *data;		/* 2 * nranks slots (see above) */
	uint64_t *sig;		/* nranks * nslots */
	uint64_t *ctr;		/* nranks * nslots */
	struct dvx_mr data_mr, sig_mr, ctr_mr;
	struct dvx_p2p_lbuf data_l, sig_l, ctr_l;
	struct dvx_p2p_rbuf data_r[W_MAX_RANKS], sig_r[W_MAX_RANKS];
	/* first failure: where and what */
	int fail_line;
	int fail_err;
	char fail_msg[160];
	void *user;
	int no_final_flush;	/* the body left a lane failed on purpose */
	uint64_t rings_len;	/* bytes of @rings (dvx_p2p_mem_req()) */
	struct dvx_hal hooked;	/* the sim's hal with obj_query hooked (cfg.query_hook) */
	struct dvx_diag init_diag;	/* the NIC's record after an expected init failure */
};

typedef void (*wbody_fn)(struct wrank *r);

/*
 * Called on the calling rank's thread after every successful QUERY of a DEVX object by
 * that rank's NIC; it may rewrite the answer (@out, @outlen) to play a device that
 * reports something else.
 */
typedef void (*wquery_fn)(const void *in, void *out, size_t outlen);

struct world_cfg {
	int nranks;
	uint64_t slot_bytes;
	uint32_t nslots;
	uint32_t qps_per_nic;
	uint32_t sq_depth;
	uint32_t comp_depth;
	uint32_t local_pair;	/* companions use a partner QP */
	uint32_t no_loopback;	/* NICs without force-loopback */
	uint32_t ib;		/* IB ports instead of RoCE */
	int progress_thread;	/* run the sim's progress thread (else ranks step it) */
	int subset;		/* connect only the pairs @link says (else everyone) */
	uint8_t link[W_MAX_RANKS][W_MAX_RANKS];
	wquery_fn query_hook;	/* NULL: the sim's answers as they are */
	uint32_t conn_mtu;	/* non-zero: dvx_p2p_cfg.conn.max_mtu (a bad one fails init) */
	int init_err;		/* non-zero: dvx_p2p_init() must fail with it (body not run) */
};

struct world {
	struct world_cfg cfg;
	void *fab_mem;
	struct dvx_sim_fabric *fab;
	void *bs_mem;
	struct dvx_bootstrap_tgroup *group;
	struct wrank r[W_MAX_RANKS];
	wbody_fn body;
};

/** world_cfg_default() - 2 ranks, 64 KiB slots, 4 signal slots, depth 256/64. */
void world_cfg_default(struct world_cfg *c);

/**
 * world_run() - build the world, run @body on every rank (as threads), tear down.
 * Return: 0 when every rank passed, else the first failing rank's error; its
 * message is printed with print_error().
 */
int world_run(const struct world_cfg *c, wbody_fn body, void *user);

/** the failure recorder used by W_CHECK */
void wfail(struct wrank *r, int line, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define W_CHECK(r, cond, ...)                                          \
	do {                                                           \
		if (!(cond)) {                                         \
			wfail((r), __LINE__, -1, __VA_ARGS__);         \
			return;                                        \
		}                                                      \
	} while (0)

#define W_OK(r, expr)                                                          \
	do {                                                                   \
		int w_err_ = (expr);                                           \
		if (w_err_) {                                                  \
			wfail((r), __LINE__, w_err_, "%s = %d", #expr, w_err_); \
			return;                                                \
		}                                                              \
	} while (0)

/* a deterministic byte pattern for (sender, receiver, round, offset) */
static inline uint8_t wpat(int from, int to, uint32_t round, uint64_t off)
{
	uint64_t x = (uint64_t)from * 0x9E3779B97F4A7C15ull ^ (uint64_t)to * 0xC2B2AE3D27D4EB4Full ^
		     (uint64_t)round * 0x165667B19E3779F9ull ^ (off >> 3) * 0xD6E8FEB86659FD93ull;

	x ^= x >> 29;
	return (uint8_t)(x >> ((off & 7) * 8));
}

#define W_SEC 1000000000ull
#define W_MS 1000000ull

/* where things are */
static inline uint8_t *wrecv(struct wrank *r, int from)
{
	return r->data + (uint64_t)from * r->w->cfg.slot_bytes;
}
static inline uint64_t wsend_off(struct wrank *r, int to)
{
	return ((uint64_t)r->w->cfg.nranks + (uint64_t)to) * r->w->cfg.slot_bytes;
}
static inline uint64_t wrecv_off(struct wrank *r, int from)
{
	return (uint64_t)from * r->w->cfg.slot_bytes;
}
static inline uint64_t wsig_off(struct wrank *r, int from, uint32_t slot)
{
	return ((uint64_t)from * r->w->cfg.nslots + slot) * 8;
}

/* the fabric the ranks' NICs are on, and this rank's NIC index in it (for
 * dvx_sim_set_port(), dvx_sim_set_faults()) */
static inline struct dvx_sim_fabric *wfab(struct wrank *r)
{
	return r->w->fab;
}
static inline unsigned wnic_index(const struct wrank *r)
{
	return (unsigned)r->rank;	/* world_run() adds one NIC per rank, in rank order */
}

#endif /* DVX_TESTS_P2P_WORLD_H */
