// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/lf/nccl_handle.c - libFuzzer harness: the NCCL plugin's 128-byte listen
 * handle (plugins/nccl/handle.h), what a peer's listen wrote and NCCL carries to this
 * rank's connect, and the messaging layer's part of it (core/msg/handle.c).
 *
 * White box: what dvxn_connect() does with a handle before any socket, as pure functions
 * of the plugin's handle.c: the stage (bytes 96-103) that names a connect in progress,
 * the decode (dvxn_handle_get()), the check of the NIC it names against this process's
 * software NICs (dvxn_sw_check(), which parses the on-demand wire address), and the NCCL
 * result of a refusal (dvxn_handle_code()); then the messaging layer's parse of bytes
 * 0-95 (dvx_msg_handle_parse(), what dvx_msg_connect() runs). Nothing connects: a join
 * of the wire (dvx_sim_wire_connect_peer()) and the handshake are sim-wire's and
 * msg-hs's.
 *
 * Feeds:
 *   byte 0  [1:0] this process's NICs: 0 mlx5 (no NIC identity read), 1 software NICs
 *           and no wire, 2 a mesh, 3 on demand; [3:2] software NICs per process - 1
 *   byte 1  ranks 1 + b % 8; byte 2: this rank, b % ranks; bytes 3-10: its fabric id
 *   bytes 11-12  the slot of the instance's one connect in progress (>= 256: none),
 *           13-16 its generation
 *   bytes 17-144  the handle
 *   the rest: a listen handle to encode (the round trip): the layer's part (family,
 *           NIC, context, cookie, listen id, port, scope, 16 bytes of IP, 47 of path),
 *           the device, a NIC identity (16 bytes) and a wire address (port, IPv4)
 *
 * Checks: every answer against its contract restated here: the stage names a connect
 * exactly when its magic is there and its slot < 256 (and the connect in progress only
 * when slot and generation are the live one's); the decode refuses exactly a wrong magic,
 * version or a non-zero byte 110-111, with a reason; the NIC check's answer restated
 * from docs/nccl.md (an unknown kind or a NIC the job lacks, another process's NIC
 * claiming this rank, a bad wire address: -EINVAL, ncclInternalError; another process
 * with no wire between or another kind of wire: -EHOSTUNREACH, ncclSystemError; a join
 * only on demand, to another rank, at exactly the address the bytes say), with a
 * printable reason on every refusal; the layer's parse refuses exactly what its layout
 * says. Nothing changes: the handle, this process's view and the instance's connects in
 * progress are read only. A decoded handle encodes back to its bytes (the stage and
 * what the decode does not read zero), and a listen handle made by the encoders decodes
 * to exactly what was encoded.
 *
 * Seeds: 'DVX_FUZZ_WRITE_SEEDS=DIR': handles written by the plugin's and the layer's
 * encoders for each kind of process (mlx5, no wire, a mesh, on demand), TCP, IPv6 and
 * UNIX listeners, with and without a connect in progress ('scripts/fuzz.sh --seeds').
 */
#include <dvx/hal/host.h>

#include "../../../core/msg/msg_priv.h"
#include "../../../plugins/nccl/abi.h"
#include "../../../plugins/nccl/handle.h"
#include "lf.h"

#define HDR 17
#define WHY 256

static int printable(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	if (!n || n == cap)
		return 0;
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return 0;
	return 1;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* the NIC check's answer, restated from docs/nccl.md */
static int want_check(const struct dvxn_sw_self *s, const struct dvxn_sw_id *id,
		      const uint8_t *at)
{
	int i;

	if (id->kind < DVXN_SW_LOCAL || id->kind > DVXN_SW_ONDEMAND)
		return -EINVAL;
	if (id->kind != s->kind)
		return -EHOSTUNREACH;
	if (s->kind == DVXN_SW_LOCAL)
		return id->fabric == s->fabric && id->nic < s->nnics ? 0 : -EHOSTUNREACH;
	if (id->rank < 0 || id->rank >= s->nranks ||
	    id->nic < (unsigned)id->rank * s->nnics ||
	    id->nic >= (unsigned)(id->rank + 1) * s->nnics)
		return -EINVAL;
	if (id->rank == s->rank)
		return id->fabric == s->fabric ? 0 : -EINVAL;
	if (s->kind == DVXN_SW_MESH)
		return 0;
	if (at[0] == 1)		/* an abstract UNIX name (one host): [1-3] zero, the token
				 * the listener's fabric identity */
		return at[1] || at[2] || at[3] || le64(at + 4) != id->fabric ? -EINVAL : 1;
	if (at[0] != 4 || at[1] || !(at[2] | at[3]))
		return -EINVAL;
	for (i = 4; i < 8; i++)
		if (at[i])
			return -EINVAL;
	return 1;
}

/* the layer's parse, restated from msg_priv.h's layout */
static int want_parse(const uint8_t *w)
{
	if (le32(w) != MSG_HANDLE_MAGIC || w[4] != MSG_HANDLE_VERSION)
		return -EINVAL;
	switch (w[5]) {
	case DVX_HAL_SOCK_IP4:
	case DVX_HAL_SOCK_IP6:
		return w[26] | w[27] ? 0 : -EINVAL;
	case DVX_HAL_SOCK_UNIX:
	case DVX_HAL_SOCK_ABSTRACT:
		return w[48] && memchr(w + 48, 0, MSG_HANDLE_PATH_MAX) ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

static void check_msg_part(const uint8_t *in)
{
	struct dvx_msg_handle h, keep;
	struct msg_handle_info i, j;
	int rc;

	memset(&h, 0, sizeof(h));
	memcpy(h.wire, in, sizeof(h.wire));
	keep = h;
	rc = dvx_msg_handle_parse(&h, &i);
	LF_CHECK(!memcmp(&h, &keep, sizeof(h)));
	LF_CHECK(rc == want_parse(in));
	if (rc)
		return;
	LF_CHECK(i.addr.family == in[5] && i.nic == in[6] && i.ctx == le64(in + 8) &&
		 i.cookie == le64(in + 16) && i.listen_id == (in[24] | in[25] << 8));
	if (i.addr.family == DVX_HAL_SOCK_IP4 || i.addr.family == DVX_HAL_SOCK_IP6) {
		LF_CHECK(i.addr.port == (in[26] | in[27] << 8) && i.addr.scope_id == le32(in + 28));
		LF_CHECK(!memcmp(i.addr.ip, in + 32, 16) && !i.addr.path[0]);
	} else {
		LF_CHECK(!strcmp(i.addr.path, (const char *)in + 48));
		LF_CHECK(!i.addr.port && !i.addr.scope_id);
	}
	/* what it read encodes to a handle that reads the same */
	dvx_msg_handle_put(&h, &i);
	LF_CHECK(!dvx_msg_handle_parse(&h, &j));
	LF_CHECK(i.ctx == j.ctx && i.cookie == j.cookie && i.listen_id == j.listen_id &&
		 i.nic == j.nic && i.addr.family == j.addr.family && i.addr.port == j.addr.port &&
		 i.addr.scope_id == j.addr.scope_id && !memcmp(i.addr.ip, j.addr.ip, 16) &&
		 !strcmp(i.addr.path, j.addr.path));	/* a path is a string: not what follows it */
}

/* what connect does with @in before any socket; the NCCL result it returns, or 0 */
static void check_connect(const struct dvxn_sw_self *self, int sw, const uint8_t *in,
			  unsigned live_slot, uint32_t live_gen)
{
	uint8_t keep[DVXN_HANDLE_BYTES], back[DVXN_HANDLE_BYTES];
	struct dvxn_sw_self skeep = *self;
	struct dvx_hal_sock_addr join;
	struct dvxn_handle d, d2;
	char why[WHY];
	unsigned slot = ~0u;
	uint32_t gen = 0;
	int named, rc, want, code;

	memcpy(keep, in, sizeof(keep));
	/* the stage: only the plugin's magic and a slot of the table name a connect */
	named = dvxn_handle_stage_get(in, &slot, &gen);
	LF_CHECK(named == ((in[96] | in[97] << 8) == DVXN_STAGE_MAGIC &&
			   (in[98] | in[99] << 8) < DVXN_MAX_PEND));
	if (named) {
		LF_CHECK(slot == (unsigned)(in[98] | in[99] << 8) && gen == le32(in + 100));
		if (slot == live_slot && gen == live_gen)
			return;	/* the connect in progress goes on: the handle is not read */
	}
	/* the decode */
	why[0] = 0;
	rc = dvxn_handle_get(&d, in, sw, why, sizeof(why));
	LF_CHECK(!memcmp(keep, in, sizeof(keep)));
	want = le32(in + 104) == DVXN_HANDLE_MAGIC && in[108] == DVXN_HANDLE_VERSION &&
	       !in[110] && !in[111] ? 0 : -EINVAL;
	LF_CHECK(rc == want);
	if (rc) {
		LF_CHECK(printable(why, sizeof(why)));
		LF_CHECK(dvxn_handle_code(rc) == DVX_NCCL_INTERNAL_ERROR);
		return;
	}
	LF_CHECK(!memcmp(d.msg, in, sizeof(d.msg)) && d.dev == in[109] && d.sw == sw);
	/* it encodes back to its bytes: the stage zero, and what was not read */
	dvxn_handle_put(back, &d);
	memcpy(keep, in, sizeof(keep));
	memset(keep + 96, 0, 8);
	if (!sw)
		memset(keep + 112, 0, 16);
	else
		keep[113] = 0;	/* the identity's reserved byte */
	LF_CHECK(!memcmp(back, keep, sizeof(back)));
	LF_CHECK(!dvxn_handle_get(&d2, back, sw, NULL, 0));
	d.id.rsvd = 0;
	LF_CHECK(!memcmp(&d, &d2, sizeof(d)));
	if (sw) {
		LF_CHECK(d.id.kind == in[112] && d.id.nic == (in[114] | in[115] << 8) &&
			 (uint32_t)d.id.rank == le32(in + 116) && d.id.fabric == le64(in + 120));
		LF_CHECK(!memcmp(d.at, in + DVXN_HANDLE_AT, DVXN_SW_AT_BYTES));
		/* the NIC it names */
		why[0] = 0;
		memset(&join, 0xa5, sizeof(join));
		rc = dvxn_sw_check(self, &d.id, d.at, &join, why, sizeof(why));
		LF_CHECK(!memcmp(self, &skeep, sizeof(skeep)));
		LF_CHECK(rc == want_check(self, &d.id, d.at));
		if (rc < 0) {
			LF_CHECK(printable(why, sizeof(why)));
			code = dvxn_handle_code(rc);
			LF_CHECK(code == (rc == -EINVAL ? DVX_NCCL_INTERNAL_ERROR :
					  DVX_NCCL_SYSTEM_ERROR));
			return;
		}
		if (rc == 1 && d.at[0] == 1) {
			/* the name DVXN_SW_AT_NAME and the token in hex, which encodes back */
			uint8_t at2[DVXN_SW_AT_BYTES];
			char nm[64];

			LF_CHECK(self->kind == DVXN_SW_ONDEMAND && d.id.rank != self->rank);
			snprintf(nm, sizeof(nm), DVXN_SW_AT_NAME "%016llx",
				 (unsigned long long)le64(d.at + 4));
			LF_CHECK(join.family == DVX_HAL_SOCK_ABSTRACT && !join.port &&
				 !strcmp(join.path, nm) && !join.scope_id);
			dvxn_sw_at_encode(at2, &join);
			LF_CHECK(!memcmp(at2, d.at, sizeof(at2)));
		} else if (rc == 1) {
			LF_CHECK(self->kind == DVXN_SW_ONDEMAND && d.id.rank != self->rank);
			LF_CHECK(join.family == DVX_HAL_SOCK_IP4 && join.port &&
				 join.port == (d.at[2] | d.at[3] << 8) &&
				 !memcmp(join.ip, d.at + 8, 4) && !join.scope_id && !join.path[0]);
		}
	}
	/* then the layer's part, as dvx_msg_connect() reads it */
	check_msg_part(in);
}

/* a listen handle made by the encoders decodes to exactly what was encoded */
static void check_listen(struct lf_in *in, int sw, enum dvxn_sw_kind kind)
{
	struct msg_handle_info mi, mo;
	struct dvx_msg_handle mh;
	struct dvx_hal_sock_addr wa, wb;
	struct dvxn_handle h, g;
	uint8_t out[DVXN_HANDLE_BYTES];
	unsigned slot;
	uint32_t gen;

	memset(&mi, 0, sizeof(mi));
	mi.addr.family = 1 + lf_u8(in) % 4;
	mi.nic = lf_u8(in);
	mi.ctx = lf_u64(in);
	mi.cookie = lf_u64(in);
	mi.listen_id = lf_u16(in);
	if (mi.addr.family == DVX_HAL_SOCK_IP4 || mi.addr.family == DVX_HAL_SOCK_IP6) {
		mi.addr.port = lf_u16(in) | 1;
		mi.addr.scope_id = lf_u32(in);
		lf_bytes(in, mi.addr.ip, 16);
	} else {
		lf_bytes(in, mi.addr.path, MSG_HANDLE_PATH_MAX - 1);
		if (!mi.addr.path[0])
			mi.addr.path[0] = '/';
	}
	dvx_msg_handle_put(&mh, &mi);
	memset(&h, 0, sizeof(h));
	memcpy(h.msg, mh.wire, sizeof(h.msg));
	h.dev = lf_u8(in);
	h.sw = sw;
	if (sw) {
		h.id.kind = (uint8_t)kind;
		h.id.nic = lf_u16(in);
		h.id.rank = (int32_t)lf_u32(in);
		h.id.fabric = lf_u64(in);
		if (kind == DVXN_SW_ONDEMAND && (mi.addr.family == DVX_HAL_SOCK_IP4 ||
						 mi.addr.family == DVX_HAL_SOCK_IP6)) {
			/* on demand the layer listens on TCP: 48-59 are the wire's */
			memset(&wa, 0, sizeof(wa));
			wa.family = DVX_HAL_SOCK_IP4;
			wa.port = lf_u16(in) | 1;
			lf_bytes(in, wa.ip, 4);
			dvxn_sw_at_encode(h.at, &wa);
			LF_CHECK(!dvxn_sw_at_decode(&wb, h.at));
			LF_CHECK(!memcmp(&wa, &wb, sizeof(wa)));
		} else {
			h.id.kind = kind == DVXN_SW_ONDEMAND ? DVXN_SW_MESH : (uint8_t)kind;
			memcpy(h.at, h.msg + DVXN_HANDLE_AT, sizeof(h.at));
		}
	}
	dvxn_handle_put(out, &h);
	LF_CHECK(!dvxn_handle_stage_get(out, &slot, &gen));
	LF_CHECK(!dvxn_handle_get(&g, out, sw, NULL, 0));
	if (sw && h.id.kind == DVXN_SW_ONDEMAND)
		memcpy(h.msg + DVXN_HANDLE_AT, h.at, sizeof(h.at));
	LF_CHECK(!memcmp(&g, &h, sizeof(h)));
	/* the layer's part reads as its encoder wrote it (on demand the wire's address sits
	 * in bytes 48-59, which a TCP listener's part does not read) */
	memcpy(mh.wire, out, sizeof(mh.wire));
	LF_CHECK(!dvx_msg_handle_parse(&mh, &mo));
	LF_CHECK(mo.ctx == mi.ctx && mo.cookie == mi.cookie && mo.nic == mi.nic &&
		 mo.listen_id == mi.listen_id && mo.addr.family == mi.addr.family);
	if (mi.addr.family == DVX_HAL_SOCK_IP4 || mi.addr.family == DVX_HAL_SOCK_IP6)
		LF_CHECK(mo.addr.port == mi.addr.port && mo.addr.scope_id == mi.addr.scope_id &&
			 !memcmp(mo.addr.ip, mi.addr.ip, 16) && !mo.addr.path[0]);
	else
		LF_CHECK(!strcmp(mo.addr.path, mi.addr.path));
	/* a connect in progress named and cleared: nothing else moves */
	slot = lf_u16(in) % DVXN_MAX_PEND;
	gen = lf_u32(in);
	dvxn_handle_stage_put(out, slot, gen);
	{
		unsigned s2;
		uint32_t g2;

		LF_CHECK(dvxn_handle_stage_get(out, &s2, &g2) && s2 == slot && g2 == gen);
		LF_CHECK(!dvxn_handle_get(&g, out, sw, NULL, 0) && !memcmp(&g, &h, sizeof(h)));
		dvxn_handle_stage_clear(out);
		LF_CHECK(!dvxn_handle_stage_get(out, &s2, &g2));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lf_in in = { data, size };
	struct dvxn_sw_self self;
	uint8_t handle[DVXN_HANDLE_BYTES];
	unsigned mode = lf_u8(&in), live_slot;
	uint32_t live_gen;
	int sw = (mode & 3) != 0;

	memset(&self, 0, sizeof(self));
	self.kind = sw ? (enum dvxn_sw_kind)(mode & 3) : DVXN_SW_LOCAL;
	self.nnics = 1 + ((mode >> 2) & 3);
	self.nranks = 1 + lf_u8(&in) % 8;
	self.rank = lf_u8(&in) % self.nranks;
	if (self.kind == DVXN_SW_LOCAL) {
		self.rank = 0;
		self.nranks = 1;
	}
	self.fabric = lf_u64(&in);
	live_slot = lf_u16(&in);
	live_gen = lf_u32(&in);
	lf_bytes(&in, handle, sizeof(handle));
	if (lf_verbose())
		fprintf(stderr, "nccl-handle: kind %u, %u NICs, rank %d of %d, live slot %u gen %u\n",
			self.kind, self.nnics, self.rank, self.nranks, live_slot, live_gen);
	check_connect(&self, sw, handle, live_slot, live_gen);
	check_listen(&in, sw, self.kind);
	return 0;
}

/* ---- seeds: the encoders' handles, for each kind of process ---- */

static void seed_one(const char *name, unsigned mode, int nranks, int rank, uint64_t fabric,
		     const struct dvxn_handle *h, int stage)
{
	uint8_t buf[HDR + DVXN_HANDLE_BYTES + 64];
	unsigned i;

	memset(buf, 0, sizeof(buf));
	buf[0] = (uint8_t)mode;
	buf[1] = (uint8_t)(nranks - 1);
	buf[2] = (uint8_t)rank;
	for (i = 0; i < 8; i++)
		buf[3 + i] = (uint8_t)(fabric >> (8 * i));
	buf[11] = stage ? 7 : 0xff;	/* the live connect: slot 7 generation 3, or none */
	buf[12] = stage ? 0 : 0xff;
	buf[13] = stage == 2 ? 4 : 3;	/* 2: the stage is stale (another generation) */
	dvxn_handle_put(buf + HDR, h);
	if (stage)
		dvxn_handle_stage_put(buf + HDR, 7, 3);
	for (i = HDR + DVXN_HANDLE_BYTES; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + mode);	/* the round trip's fields */
	lf_seed(name, buf, sizeof(buf));
}

static void write_seeds(void)
{
	static const char *const names[4] = { "mlx5", "local", "mesh", "ondemand" };
	struct msg_handle_info mi;
	struct dvx_msg_handle mh;
	struct dvx_hal_sock_addr wa;
	struct dvxn_handle h;
	char name[64];
	unsigned kind, fam;
	const uint64_t fab = 0x1234abcd5678ef01ull;

	for (kind = 0; kind < 4; kind++)
		for (fam = DVX_HAL_SOCK_UNIX; fam <= DVX_HAL_SOCK_ABSTRACT; fam++) {
			memset(&mi, 0, sizeof(mi));
			mi.addr.family = (uint16_t)fam;
			mi.nic = 1;
			mi.ctx = 0x1122334455667788ull + fam;
			mi.cookie = 0x8877665544332211ull ^ kind;
			mi.listen_id = 0x803;
			if (fam == DVX_HAL_SOCK_IP4 || fam == DVX_HAL_SOCK_IP6) {
				mi.addr.port = 41000;
				mi.addr.ip[0] = 127;
				mi.addr.ip[3] = 1;
			} else {
				snprintf(mi.addr.path, sizeof(mi.addr.path), "/tmp/dvx-msg.%u", fam);
			}
			if (kind == DVXN_SW_ONDEMAND && fam != DVX_HAL_SOCK_IP4)
				continue;	/* on demand the layer listens on TCP */
			dvx_msg_handle_put(&mh, &mi);
			memset(&h, 0, sizeof(h));
			memcpy(h.msg, mh.wire, sizeof(h.msg));
			h.dev = 1;
			h.sw = kind != 0;
			if (h.sw) {
				h.id.kind = (uint8_t)kind;
				h.id.rank = kind == DVXN_SW_LOCAL ? 0 : 2;
				h.id.nic = (uint16_t)(h.id.rank * 2 + 1);
				h.id.fabric = kind == DVXN_SW_LOCAL ? fab : fab ^ 0xff;
			}
			if (kind == DVXN_SW_ONDEMAND) {
				memset(&wa, 0, sizeof(wa));
				wa.family = DVX_HAL_SOCK_IP4;
				wa.port = 43210;
				wa.ip[0] = 127;
				wa.ip[3] = 1;
				dvxn_sw_at_encode(h.at, &wa);
				/* and one host's abstract name */
				memset(&wa, 0, sizeof(wa));
				wa.family = DVX_HAL_SOCK_ABSTRACT;
				snprintf(wa.path, sizeof(wa.path), DVXN_SW_AT_NAME "%016llx",
					 (unsigned long long)(fab ^ 0xff));
				{
					struct dvxn_handle ha = h;

					dvxn_sw_at_encode(ha.at, &wa);
					snprintf(name, sizeof(name), "%s-family%u-abstract",
						 names[kind], fam);
					seed_one(name, kind | 1u << 2, 4, 1, fab, &ha, 0);
				}
			}
			/* 2 NICs per process ([3:2] = 1), 4 ranks, this one rank 1 */
			snprintf(name, sizeof(name), "%s-family%u", names[kind], fam);
			seed_one(name, kind | 1u << 2, 4, 1, fab, &h, 0);
			snprintf(name, sizeof(name), "%s-family%u-staged", names[kind], fam);
			seed_one(name, kind | 1u << 2, 4, 1, fab, &h, 1);
			snprintf(name, sizeof(name), "%s-family%u-stale", names[kind], fam);
			seed_one(name, kind | 1u << 2, 4, 1, fab, &h, 2);
		}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lf_seed_mode(write_seeds);
	return 0;
}
