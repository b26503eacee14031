// SPDX-License-Identifier: MIT
/*
 * mlx5/decode.c - WQE and CQE decoders, pretty-printers and name tables.
 *
 * The WQE decoder reads a ring dump byte by byte at the offsets the PRM gives (prm
 * 2.2-2.7): it shares no code with the builders of dvx/mlx5/wqe.h, but it does share the
 * PRM header's opcode values and the CQE parser with the driver, so a wrong constant
 * there would be wrong on both sides: the independent checks of the layouts are the
 * byte-exact tests against rdma-core's mlx5dv.h and the software NIC's own decoders. Only dvx_mlx5_wqe_encode() calls the builders. Every read wraps at the ring's
 * end, so a WQE may start in the last WQEBB and continue at WQEBB 0.
 *
 * Layouts recognised (ds in 16-byte units, ctrl first in every WQE):
 *   NOP                          ctrl [anything up to ds is ignored]          ds >= 1
 *   RDMA_WRITE[_IMM], RDMA_READ  ctrl, raddr, (data * n | one inline seg)    ds >= 2
 *   SEND[_IMM], SEND_INVAL       ctrl, (data * n | one inline seg)           ds >= 1
 *   ATOMIC_CS, ATOMIC_FA         ctrl, raddr, atomic, data                    ds == 4
 *   ATOMIC_MASKED_CS/_FA         ctrl, raddr, masked operands, data           ds == 4
 *                                (masked CS with opmod 0x09: 32-byte operands, ds == 5)
 *   WAIT opmod 0, SEND_EN,       ctrl, wait segment                           ds == 2
 *   RECV_EN
 *   WAIT opmod != 0              ctrl, then up to 32 bytes kept raw           ds >= 2
 * Inline data is recognised by bit 31 of the first dword after the fixed segments;
 * the inline header + payload must fit within ds and fill it (ceil((4 + len) / 16)
 * units). Zero-length data segments are reported as they are.
 *
 * dvx_mlx5_wqe_format() lines, in this order (names are stable; hex numbers are
 * 0x-prefixed and zero-padded to the field's width; indices and lengths are decimal):
 *   opcode: RDMA_WRITE (0x08)      opmod: 0x00         wqe_index: 5
 *   qpn: 0x000123                  ds: 3               wqebbs: 1
 *   signature: 0x00                fence: none (0)     completion: always (2)
 *   solicited: 0                   imm: 0x00000000
 * then by kind:
 *   RDMA      raddr: 0x0000000000001000, rkey: 0x00005678, inline: 0|1, payload
 *   SEND      [invalidate_rkey: 0x12345678 (SEND_INVAL)], inline: 0|1, payload
 *   payload   inline: inline_len: 8, inline_data: 1122.. ("(empty)" for none)
 *             else:   sge_count: N, then per segment sge[i].byte_count: 4096,
 *                     sge[i].lkey: 0x00001234, sge[i].addr: 0x0000000000000040
 *   atomics   raddr, rkey, atomic_size: 4|8, the operands, sge_count, sge[0].*
 *             ATOMIC_CS: compare, swap     masked CS: compare, compare_mask, swap,
 *             ATOMIC_FA: add, compare      swap_mask     masked FA: add, field_boundary
 *             (operands 0x + 8 or 16 digits, by atomic_size)
 *   WAIT      wait_on: cq (0) | data (1) | time (2) | unknown (n); then for opmod 0
 *             wait_max_index: 5, wait_cqn: 0x00004a; else wait_segment: <hex>
 *   SEND_EN / RECV_EN   wait_max_index: 5, slave_qpn: 0x000234
 * and last, after -EBADMSG only, error: <dvx_mlx5_wqe_error_str()>.
 *
 * dvx_mlx5_cqe_format() lines, in this order:
 *   opcode: REQ_ERR (0x0d)         format: normal (0)  owner: 0
 *   solicited: 0                   qpn: 0x000123       wqe_counter: 5
 *   [wqe_opcode: RDMA_WRITE (0x08)  (requester CQEs: REQ, REQ_ERR)]
 *   byte_cnt: 0                    imm: 0x00000000     srqn_uidx: 0x000000
 *   rqpn: 0x000000                 slid: 0x0000        timestamp: 0x0000000000000000
 *   status: ok (0) | EPERM (-1) | ...  (the errno dvx_mlx5_cqe_parse() returned)
 * then for REQ_ERR / RESP_ERR:
 *   syndrome: REMOTE_ACCESS_ERR (0x13)
 *   vendor_syndrome: 0x93 (ODP)    (the name only when dvx knows the code)
 *   hw_err_synd: 0x00              hw_synd_type: 0x00
 *   cause: <dvx_mlx5_syndrome_cause()>
 *   [vendor_cause: <dvx_mlx5_vendor_syndrome_cause()>]
 *   failed_wqe_opcode: RDMA_WRITE (0x08)  (RESP_ERR: "receive WQE ...")
 *   failed_wqe_qpn: 0x000123       failed_wqe_index: 5
 * and for SIG_ERR, RESIZE_CQ, NO_PACKET, INVALID and unknown opcodes a "note:" line.
 * A compressed CQE (format 3) prints only "format: compressed (3)", "owner:",
 * "compressed: yes - ..." and "status:": none of its other bytes are read as fields.
 *
 * Pure code: no allocation, no printing (snprintf into the caller's buffer).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <dvx/mlx5/decode.h>

/* ------------------------------------------------------------------------- */
/* name tables                                                               */

static const char *const opcode_names[256] = {
	[DVX_MLX5_OPCODE_NOP] = "NOP",
	[DVX_MLX5_OPCODE_SEND_INVAL] = "SEND_INVAL",
	[DVX_MLX5_OPCODE_RDMA_WRITE] = "RDMA_WRITE",
	[DVX_MLX5_OPCODE_RDMA_WRITE_IMM] = "RDMA_WRITE_IMM",
	[DVX_MLX5_OPCODE_SEND] = "SEND",
	[DVX_MLX5_OPCODE_SEND_IMM] = "SEND_IMM",
	[DVX_MLX5_OPCODE_WAIT] = "WAIT",
	[DVX_MLX5_OPCODE_RDMA_READ] = "RDMA_READ",
	[DVX_MLX5_OPCODE_ATOMIC_CS] = "ATOMIC_CS",
	[DVX_MLX5_OPCODE_ATOMIC_FA] = "ATOMIC_FA",
	[DVX_MLX5_OPCODE_ATOMIC_MASKED_CS] = "ATOMIC_MASKED_CS",
	[DVX_MLX5_OPCODE_ATOMIC_MASKED_FA] = "ATOMIC_MASKED_FA",
	[DVX_MLX5_OPCODE_RECV_EN] = "RECV_EN",
	[DVX_MLX5_OPCODE_SEND_EN] = "SEND_EN",
	[DVX_MLX5_OPCODE_DUMP] = "DUMP",
	[DVX_MLX5_OPCODE_UMR] = "UMR",
	[0x2d] = "ACCESS_ASO",			/* prm 2.2 */
	[0x2f] = "MMO",
};

/* other spellings seen in the sources (OFED, verbs); none may read as a hex number */
static const struct {
	const char *name;
	uint8_t opcode;
} opcode_aliases[] = {
	{ "WRITE", DVX_MLX5_OPCODE_RDMA_WRITE },
	{ "WRITE_IMM", DVX_MLX5_OPCODE_RDMA_WRITE_IMM },
	{ "READ", DVX_MLX5_OPCODE_RDMA_READ },
	{ "MASKED_CS", DVX_MLX5_OPCODE_ATOMIC_MASKED_CS },
	{ "MASKED_FA", DVX_MLX5_OPCODE_ATOMIC_MASKED_FA },
	{ "CQE_WAIT", DVX_MLX5_OPCODE_WAIT },
	{ "SEND_ENABLE", DVX_MLX5_OPCODE_SEND_EN },
	{ "RECV_ENABLE", DVX_MLX5_OPCODE_RECV_EN },
};

static const char *const cqe_opcode_names[16] = {
	[DVX_MLX5_CQE_REQ] = "REQ",
	[DVX_MLX5_CQE_RESP_WR_IMM] = "RESP_WR_IMM",
	[DVX_MLX5_CQE_RESP_SEND] = "RESP_SEND",
	[DVX_MLX5_CQE_RESP_SEND_IMM] = "RESP_SEND_IMM",
	[DVX_MLX5_CQE_RESP_SEND_INV] = "RESP_SEND_INV",
	[DVX_MLX5_CQE_RESIZE_CQ] = "RESIZE_CQ",
	[DVX_MLX5_CQE_NO_PACKET] = "NO_PACKET",
	[DVX_MLX5_CQE_SIG_ERR] = "SIG_ERR",
	[DVX_MLX5_CQE_REQ_ERR] = "REQ_ERR",
	[DVX_MLX5_CQE_RESP_ERR] = "RESP_ERR",
	[DVX_MLX5_CQE_INVALID] = "INVALID",
};

/* prm 4.5; the causes are the usual reasons for each syndrome on an RC QP */
static const struct {
	uint8_t syndrome;
	const char *name;
	const char *cause;
} syndromes[] = {
	{ DVX_MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, "LOCAL_LENGTH_ERR",
	  "local length error: the message is longer than the receive buffer or the QP's "
	  "maximum message size, or the data segment lengths are inconsistent" },
	{ DVX_MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, "LOCAL_QP_OP_ERR",
	  "local QP operation error: the WQE is malformed or not allowed on this QP (bad "
	  "opcode/opmod/ds, inline data too long, WAIT/SEND_EN without cd_master)" },
	{ DVX_MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, "LOCAL_PROT_ERR",
	  "local protection error: bad lkey, or a local address out of local bounds of the "
	  "memory region (or the MR lacks the local access the operation needs)" },
	{ DVX_MLX5_CQE_SYNDROME_WR_FLUSH_ERR, "WR_FLUSH_ERR",
	  "flushed: an earlier WQE on this QP failed and moved it to error; look for the "
	  "first error CQE of this QP, this WQE itself may be fine" },
	{ DVX_MLX5_CQE_SYNDROME_MW_BIND_ERR, "MW_BIND_ERR",
	  "memory window bind error: the window or its MR does not allow the bind" },
	{ DVX_MLX5_CQE_SYNDROME_BAD_RESP_ERR, "BAD_RESP_ERR",
	  "bad response: the responder sent an unexpected or malformed response "
	  "(transport protocol error)" },
	{ DVX_MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR, "LOCAL_ACCESS_ERR",
	  "local access error: the local buffer of a response (RDMA READ data or atomic "
	  "result) could not be written: bad lkey/address or no local write access" },
	{ DVX_MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, "REMOTE_INVAL_REQ_ERR",
	  "remote invalid request: the responder rejected the request (operation not "
	  "enabled on the remote QP: rre/rwe/rae or atomic_mode, message too long, or an "
	  "unsupported atomic size)" },
	{ DVX_MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, "REMOTE_ACCESS_ERR",
	  "remote access error: bad rkey, or an address out of remote bounds of the MR, "
	  "or a missing remote access right (remote write/read/atomic) on that MR" },
	{ DVX_MLX5_CQE_SYNDROME_REMOTE_OP_ERR, "REMOTE_OP_ERR",
	  "remote operation error: the responder could not complete the operation (its "
	  "QP went to error, or its receive WQE was bad)" },
	{ DVX_MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, "TRANSPORT_RETRY_EXC_ERR",
	  "transport retry exhausted: no ACK from the peer: peer unreachable, wrong address "
	  "(LID/GID/MAC, remote QPN, PSN), peer QP not in RTR/RTS, or link down" },
	{ DVX_MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, "RNR_RETRY_EXC_ERR",
	  "RNR retry exhausted: no receive posted at the responder (receiver not ready) for "
	  "a SEND or WRITE_IMM" },
	{ DVX_MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR, "REMOTE_ABORTED_ERR",
	  "remote aborted: the responder aborted the operation (see the vendor syndrome)" },
};

/* vendor_err_synd values UCX handles (prm 4.5: with REMOTE_ABORTED on RESP_ERR) */
static const struct {
	uint8_t code;
	const char *name;
	const char *cause;
} vendor_syndromes[] = {
	{ 0x93, "ODP", "on-demand paging: the message was aborted while a page fault on an "
		       "ODP memory region was resolved" },
	{ 0x99, "PSN", "PSN error: the message was aborted on a packet sequence number error "
		       "(out-of-sequence or duplicate packets)" },
};

static const char *const fm_names[] = {
	[DVX_MLX5_FM_NONE] = "none",
	[DVX_MLX5_FM_INITIATOR_SMALL] = "initiator_small",
	[DVX_MLX5_FM_FENCE] = "fence",
	[DVX_MLX5_FM_STRONG_ORDERING] = "strong_ordering",
	[DVX_MLX5_FM_FENCE_AND_INITIATOR_SMALL] = "fence_and_initiator_small",
};

static const char *const ce_names[] = {
	[DVX_MLX5_CE_ERROR_ONLY] = "error_only",
	[DVX_MLX5_CE_FIRST_ERROR] = "first_error",
	[DVX_MLX5_CE_ALWAYS] = "always",
	[DVX_MLX5_CE_CQE_AND_EQE] = "cqe_and_eqe",
};

static const char *const wqe_errors[DVX_MLX5_WQE_ERR_MAX] = {
	[DVX_MLX5_WQE_OK] = "ok",
	[DVX_MLX5_WQE_ERR_OPCODE] = "unknown opcode",
	[DVX_MLX5_WQE_ERR_UNDECODED] = "opcode whose segment layout dvx does not decode",
	[DVX_MLX5_WQE_ERR_DS_ZERO] = "ds is 0 (empty or never-written WQEBB)",
	[DVX_MLX5_WQE_ERR_DS_RING] = "ds makes the WQE larger than the ring",
	[DVX_MLX5_WQE_ERR_DS_SHORT] = "ds too small for the opcode's segments",
	[DVX_MLX5_WQE_ERR_DS_LONG] = "ds larger than the opcode's segments",
	[DVX_MLX5_WQE_ERR_INLINE_LEN] = "inline length runs past ds",
	[DVX_MLX5_WQE_ERR_INLINE_READ] = "inline data on an RDMA_READ",
	[DVX_MLX5_WQE_ERR_BYTE_COUNT] = "data segment byte_count has bit 31 set",
	[DVX_MLX5_WQE_ERR_OPMOD] = "masked atomic opmod is neither 0x08 (4 B) nor 0x09 (8 B)",
};

const char *dvx_mlx5_opcode_name(uint8_t opcode)
{
	return opcode_names[opcode] ? opcode_names[opcode] : "UNKNOWN";
}

const char *dvx_mlx5_cqe_opcode_name(uint8_t opcode)
{
	return opcode < 16 && cqe_opcode_names[opcode] ? cqe_opcode_names[opcode] : "UNKNOWN";
}

const char *dvx_mlx5_syndrome_name(uint8_t syndrome)
{
	size_t i;

	for (i = 0; i < DVX_ARRAY_SIZE(syndromes); i++)
		if (syndromes[i].syndrome == syndrome)
			return syndromes[i].name;
	return "UNKNOWN";
}

const char *dvx_mlx5_syndrome_cause(uint8_t syndrome)
{
	size_t i;

	for (i = 0; i < DVX_ARRAY_SIZE(syndromes); i++)
		if (syndromes[i].syndrome == syndrome)
			return syndromes[i].cause;
	return "unknown syndrome: not in the PRM table dvx knows; see the vendor syndrome";
}

const char *dvx_mlx5_vendor_syndrome_name(uint8_t vendor_syndrome)
{
	size_t i;

	for (i = 0; i < DVX_ARRAY_SIZE(vendor_syndromes); i++)
		if (vendor_syndromes[i].code == vendor_syndrome)
			return vendor_syndromes[i].name;
	return "UNKNOWN";
}

const char *dvx_mlx5_vendor_syndrome_cause(uint8_t vendor_syndrome)
{
	size_t i;

	for (i = 0; i < DVX_ARRAY_SIZE(vendor_syndromes); i++)
		if (vendor_syndromes[i].code == vendor_syndrome)
			return vendor_syndromes[i].cause;
	return NULL;
}

const char *dvx_mlx5_fm_name(uint8_t fm)
{
	if (fm < DVX_ARRAY_SIZE(fm_names))
		return fm_names[fm];
	return fm <= 7 ? "reserved" : "UNKNOWN";
}

const char *dvx_mlx5_ce_name(uint8_t ce)
{
	return ce < DVX_ARRAY_SIZE(ce_names) ? ce_names[ce] : "UNKNOWN";
}

const char *dvx_mlx5_wqe_error_str(uint8_t err)
{
	return err < DVX_MLX5_WQE_ERR_MAX ? wqe_errors[err] : "unknown decode error";
}

/* case-insensitive, '-' == '_' */
static int name_eq(const char *a, const char *b)
{
	for (;; a++, b++) {
		char x = *a == '-' ? '_' : *a, y = *b == '-' ? '_' : *b;

		if (x >= 'a' && x <= 'z')
			x = (char)(x - 'a' + 'A');
		if (y >= 'a' && y <= 'z')
			y = (char)(y - 'a' + 'A');
		if (x != y)
			return 0;
		if (!x)
			return 1;
	}
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int dvx_mlx5_opcode_from_name(const char *name)
{
	static const char *const prefixes[] = { "DVX_MLX5_OPCODE_", "MLX5_OPCODE_", "OPCODE_" };
	const char *s;
	unsigned v = 0;
	size_t i;

	if (!name || !*name)
		return -EINVAL;
	for (i = 0; i < DVX_ARRAY_SIZE(prefixes); i++) {
		size_t n = strlen(prefixes[i]);

		if (!strncasecmp(name, prefixes[i], n) && name[n]) {
			name += n;
			break;
		}
	}
	for (i = 0; i < 256; i++)
		if (opcode_names[i] && name_eq(name, opcode_names[i]))
			return (int)i;
	for (i = 0; i < DVX_ARRAY_SIZE(opcode_aliases); i++)
		if (name_eq(name, opcode_aliases[i].name))
			return opcode_aliases[i].opcode;

	/* a number, in hex */
	s = name;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		int h = hex_digit(*s);

		if (h < 0)
			return -EINVAL;
		v = v * 16 + (unsigned)h;
		if (v > 0xff)
			return -EINVAL;
	}
	return (int)v;
}

/* ------------------------------------------------------------------------- */
/* WQE decoding                                                              */

/* the WQE being read: byte @off of it is ring[(base + off) & mask] */
struct wqe_reader {
	const uint8_t *ring;
	uint32_t mask;
	uint32_t base;
};

static uint8_t rd8(const struct wqe_reader *r, uint32_t off)
{
	return r->ring[(r->base + off) & r->mask];
}

static uint32_t rd32(const struct wqe_reader *r, uint32_t off)
{
	return ((uint32_t)rd8(r, off) << 24) | ((uint32_t)rd8(r, off + 1) << 16) |
	       ((uint32_t)rd8(r, off + 2) << 8) | rd8(r, off + 3);
}

static uint64_t rd64(const struct wqe_reader *r, uint32_t off)
{
	return ((uint64_t)rd32(r, off) << 32) | rd32(r, off + 4);
}

static int bad(struct dvx_mlx5_wqe_desc *d, enum dvx_mlx5_wqe_err why)
{
	d->error = (uint8_t)why;
	return -EBADMSG;
}

static uint8_t kind_of(uint8_t opcode)
{
	switch (opcode) {
	case DVX_MLX5_OPCODE_NOP:
		return DVX_MLX5_KIND_NOP;
	case DVX_MLX5_OPCODE_RDMA_WRITE:
	case DVX_MLX5_OPCODE_RDMA_WRITE_IMM:
	case DVX_MLX5_OPCODE_RDMA_READ:
		return DVX_MLX5_KIND_RDMA;
	case DVX_MLX5_OPCODE_SEND:
	case DVX_MLX5_OPCODE_SEND_IMM:
	case DVX_MLX5_OPCODE_SEND_INVAL:
		return DVX_MLX5_KIND_SEND;
	case DVX_MLX5_OPCODE_ATOMIC_CS:
	case DVX_MLX5_OPCODE_ATOMIC_FA:
		return DVX_MLX5_KIND_ATOMIC;
	case DVX_MLX5_OPCODE_ATOMIC_MASKED_CS:
	case DVX_MLX5_OPCODE_ATOMIC_MASKED_FA:
		return DVX_MLX5_KIND_MASKED_ATOMIC;
	case DVX_MLX5_OPCODE_WAIT:
	case DVX_MLX5_OPCODE_SEND_EN:
	case DVX_MLX5_OPCODE_RECV_EN:
		return DVX_MLX5_KIND_WAIT;
	default:
		return DVX_MLX5_KIND_UNKNOWN;
	}
}

/* data segment (prm 2.5) at WQE byte @off */
static void read_data_seg(const struct wqe_reader *r, uint32_t off, struct dvx_mlx5_sge *sge)
{
	sge->length = rd32(r, off);
	sge->lkey = rd32(r, off + 4);
	sge->addr = rd64(r, off + 8);
}

/* raddr segment (prm 2.3) at WQE byte 16 */
static void read_raddr_seg(const struct wqe_reader *r, struct dvx_mlx5_wqe_desc *d)
{
	d->raddr = rd64(r, 16);
	d->rkey = rd32(r, 24);
}

/*
 * The payload of RDMA and SEND WQEs, from unit @first to ds: nothing, one inline
 * segment (prm 2.6), or data segments (prm 2.5).
 */
static int decode_payload(const struct wqe_reader *r, struct dvx_mlx5_wqe_desc *d,
			  uint32_t first)
{
	uint32_t off = first * DVX_MLX5_DS_BYTES, units = d->ds - first, hdr, i;

	if (!units)
		return 0;
	hdr = rd32(r, off);
	if (hdr & DVX_MLX5_INLINE_SEG) {
		uint32_t room = units * DVX_MLX5_DS_BYTES - 4;
		uint32_t len = hdr & ~DVX_MLX5_INLINE_SEG, n = len < room ? len : room;

		d->is_inline = 1;
		d->inline_len = len;
		for (i = 0; i < n; i++)
			d->inline_data[i] = rd8(r, off + 4 + i);
		if (len > room)
			return bad(d, DVX_MLX5_WQE_ERR_INLINE_LEN);
		if (DVX_DIV_ROUND_UP(4 + len, DVX_MLX5_DS_BYTES) != units)
			return bad(d, DVX_MLX5_WQE_ERR_DS_LONG);
		return 0;
	}
	d->nsge = units;
	for (i = 0; i < units; i++)
		read_data_seg(r, off + i * DVX_MLX5_DS_BYTES, &d->sge[i]);
	for (i = 1; i < units; i++)
		if (d->sge[i].length & DVX_MLX5_INLINE_SEG)
			return bad(d, DVX_MLX5_WQE_ERR_BYTE_COUNT);
	return 0;
}

/* ds must be exactly @want units; the segments ds covers are read either way */
static int check_fixed_ds(struct dvx_mlx5_wqe_desc *d, uint32_t want)
{
	if (d->ds < want)
		return bad(d, DVX_MLX5_WQE_ERR_DS_SHORT);
	if (d->ds > want)
		return bad(d, DVX_MLX5_WQE_ERR_DS_LONG);
	return 0;
}

static int decode_atomic(const struct wqe_reader *r, struct dvx_mlx5_wqe_desc *d)
{
	int err = check_fixed_ds(d, 4);

	d->atomic_size = 8;
	if (d->ds >= 2)
		read_raddr_seg(r, d);
	if (d->ds >= 3) {
		/* prm 2.4: swap_add then compare, both BE64 */
		d->swap_add = rd64(r, 32);
		d->compare = rd64(r, 40);
	}
	if (d->ds >= 4) {
		d->nsge = 1;
		read_data_seg(r, 48, &d->sge[0]);
	}
	return err;
}

static int decode_masked(const struct wqe_reader *r, struct dvx_mlx5_wqe_desc *d)
{
	int cs = d->opcode == DVX_MLX5_OPCODE_ATOMIC_MASKED_CS;
	uint32_t units, data;
	int err;

	if (d->opmod == DVX_MLX5_OPMOD_EXT_ATOMIC_4B)
		d->atomic_size = 4;
	else if (d->opmod == DVX_MLX5_OPMOD_EXT_ATOMIC_8B)
		d->atomic_size = 8;
	else
		return bad(d, DVX_MLX5_WQE_ERR_OPMOD);

	/* operand units: 2 for masked CS 8 B (32 bytes), else 1 */
	units = cs && d->atomic_size == 8 ? 2 : 1;
	data = 2 + units;
	err = check_fixed_ds(d, data + 1);
	if (d->ds >= 2)
		read_raddr_seg(r, d);
	if (d->ds >= data) {
		if (cs && d->atomic_size == 4) {
			d->swap_add = rd32(r, 32);
			d->compare = rd32(r, 36);
			d->swap_mask = rd32(r, 40);
			d->compare_mask = rd32(r, 44);
		} else if (cs) {
			d->swap_add = rd64(r, 32);
			d->compare = rd64(r, 40);
			d->swap_mask = rd64(r, 48);
			d->compare_mask = rd64(r, 56);
		} else if (d->atomic_size == 4) {
			d->swap_add = rd32(r, 32);
			d->field_boundary = rd32(r, 36);
		} else {
			d->swap_add = rd64(r, 32);
			d->field_boundary = rd64(r, 40);
		}
	}
	if (d->ds > data) {
		d->nsge = 1;
		read_data_seg(r, data * DVX_MLX5_DS_BYTES, &d->sge[0]);
	}
	return err;
}

static int decode_wait(const struct wqe_reader *r, struct dvx_mlx5_wqe_desc *d)
{
	uint32_t i;

	if (d->opcode == DVX_MLX5_OPCODE_WAIT && d->opmod != DVX_MLX5_OPMOD_WAIT_CQ_PI) {
		/* wait on data / time: a different 32-byte segment, kept raw */
		if (d->ds < 2)
			return bad(d, DVX_MLX5_WQE_ERR_DS_SHORT);
		d->raw_len = (d->ds - 1u) * DVX_MLX5_DS_BYTES;
		if (d->raw_len > DVX_MLX5_DECODE_RAW_BYTES)
			d->raw_len = DVX_MLX5_DECODE_RAW_BYTES;
		for (i = 0; i < d->raw_len; i++)
			d->raw[i] = rd8(r, 16 + i);
		return 0;
	}
	if (d->ds >= 2) {
		/* prm 2.7: 8 reserved bytes, max_index, qpn_cqn */
		d->wait_max_index = rd32(r, 24);
		d->wait_qpn_cqn = rd32(r, 28);
	}
	return check_fixed_ds(d, 2);
}

int dvx_mlx5_wqe_decode(const void *ring, uint32_t ring_bytes, uint32_t idx,
			struct dvx_mlx5_wqe_desc *d)
{
	struct wqe_reader r;
	uint32_t w;
	int err;

	if (!ring || !d || ring_bytes < DVX_MLX5_SEND_WQE_BB || !DVX_IS_POW2(ring_bytes))
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	r.ring = (const uint8_t *)ring;
	r.mask = ring_bytes - 1;
	r.base = (idx << DVX_MLX5_SEND_WQE_SHIFT) & r.mask;

	/* ctrl segment, prm 2.2 */
	w = rd32(&r, 0);
	d->opmod = (uint8_t)(w >> 24);
	d->idx = (uint16_t)(w >> 8);
	d->opcode = (uint8_t)w;
	w = rd32(&r, 4);
	d->qpn = w >> 8;
	d->ds = (uint8_t)(w & 0x3f);
	d->signature = rd8(&r, 8);
	d->fm_ce_se = rd8(&r, 11);
	d->imm = rd32(&r, 12);
	d->nwqebb = (uint8_t)DVX_DIV_ROUND_UP(d->ds, DVX_MLX5_DS_PER_WQEBB);
	d->kind = kind_of(d->opcode);

	if (d->kind == DVX_MLX5_KIND_UNKNOWN)
		return bad(d, opcode_names[d->opcode] ? DVX_MLX5_WQE_ERR_UNDECODED :
							DVX_MLX5_WQE_ERR_OPCODE);
	if (!d->ds)
		return bad(d, DVX_MLX5_WQE_ERR_DS_ZERO);
	if ((uint32_t)d->nwqebb * DVX_MLX5_SEND_WQE_BB > ring_bytes)
		return bad(d, DVX_MLX5_WQE_ERR_DS_RING);

	switch (d->kind) {
	case DVX_MLX5_KIND_NOP:
		err = 0;
		break;
	case DVX_MLX5_KIND_RDMA:
		if (d->ds < 2)
			return bad(d, DVX_MLX5_WQE_ERR_DS_SHORT);
		read_raddr_seg(&r, d);
		err = decode_payload(&r, d, 2);
		if (!err && d->is_inline && d->opcode == DVX_MLX5_OPCODE_RDMA_READ)
			err = bad(d, DVX_MLX5_WQE_ERR_INLINE_READ);
		break;
	case DVX_MLX5_KIND_SEND:
		err = decode_payload(&r, d, 1);
		break;
	case DVX_MLX5_KIND_ATOMIC:
		err = decode_atomic(&r, d);
		break;
	case DVX_MLX5_KIND_MASKED_ATOMIC:
		err = decode_masked(&r, d);
		break;
	default:
		err = decode_wait(&r, d);
		break;
	}
	return err ? err : d->nwqebb;
}

/* ------------------------------------------------------------------------- */
/* WQE encoding through the builders                                          */

/* ds the builder will write must match what @d says, when it says anything */
static int ds_ok(const struct dvx_mlx5_wqe_desc *d, uint32_t ds)
{
	return (!d->ds || d->ds == ds) &&
	       (!d->nwqebb || d->nwqebb == dvx_mlx5_ds_to_wqebb(ds));
}

static int encode_payload(const struct dvx_mlx5_wq *wq, uint32_t idx,
			  const struct dvx_mlx5_wqe_desc *d, uint32_t fixed)
{
	int rdma = fixed == 2, with_imm;
	uint32_t i;

	with_imm = d->opcode == DVX_MLX5_OPCODE_RDMA_WRITE_IMM ||
		   d->opcode == DVX_MLX5_OPCODE_SEND_IMM;
	if (d->opmod || (!with_imm && d->imm))
		return -EINVAL;
	if (!rdma && (d->raddr || d->rkey))
		return -EINVAL;
	if (d->is_inline) {
		if (d->inline_len > DVX_MLX5_MAX_INLINE)
			return -EMSGSIZE;
		if (d->nsge ||
		    !ds_ok(d, fixed + DVX_DIV_ROUND_UP(4 + d->inline_len, DVX_MLX5_DS_BYTES)))
			return -EINVAL;
		if (rdma)
			return dvx_mlx5_wqe_rdma_write_inline(wq, idx, d->opcode, d->fm_ce_se,
							      d->imm,
							      &(struct dvx_mlx5_raddr){ d->raddr,
											d->rkey },
							      d->inline_data, d->inline_len);
		return dvx_mlx5_wqe_send_inline(wq, idx, d->opcode, d->fm_ce_se, d->imm,
						d->inline_data, d->inline_len);
	}
	if (d->nsge > DVX_MLX5_DECODE_MAX_SGE || d->inline_len || !ds_ok(d, fixed + d->nsge))
		return -EINVAL;
	for (i = 0; i < d->nsge; i++)
		if (!d->sge[i].length)	/* the builders would skip it */
			return -EINVAL;
	if (rdma)
		return dvx_mlx5_wqe_rdma_sgl(wq, idx, d->opcode, d->fm_ce_se, d->imm,
					     &(struct dvx_mlx5_raddr){ d->raddr, d->rkey }, d->sge,
					     d->nsge);
	return dvx_mlx5_wqe_send_sgl(wq, idx, d->opcode, d->fm_ce_se, d->imm, d->sge, d->nsge);
}

static int encode_atomic(const struct dvx_mlx5_wq *wq, uint32_t idx,
			 const struct dvx_mlx5_wqe_desc *d)
{
	const struct dvx_mlx5_sge *s = &d->sge[0];

	if (d->opmod || d->imm || d->nsge != 1 || s->length != 8 || d->is_inline ||
	    (d->atomic_size && d->atomic_size != 8) || d->swap_mask || d->compare_mask ||
	    d->field_boundary || !ds_ok(d, 4))
		return -EINVAL;
	if (d->opcode == DVX_MLX5_OPCODE_ATOMIC_CS)
		return dvx_mlx5_wqe_atomic_cs(wq, idx, d->fm_ce_se,
					      &(struct dvx_mlx5_raddr){ d->raddr, d->rkey },
					      d->compare, d->swap_add, s->addr, s->lkey);
	if (d->compare)		/* the FA builder writes compare 0 */
		return -EINVAL;
	return dvx_mlx5_wqe_atomic_fa(wq, idx, d->fm_ce_se, d->raddr, d->rkey, d->swap_add,
				      s->addr, s->lkey);
}

static int encode_masked(const struct dvx_mlx5_wq *wq, uint32_t idx,
			 const struct dvx_mlx5_wqe_desc *d)
{
	const struct dvx_mlx5_sge *s = &d->sge[0];
	int cs = d->opcode == DVX_MLX5_OPCODE_ATOMIC_MASKED_CS;
	uint32_t size;

	if (d->opmod == DVX_MLX5_OPMOD_EXT_ATOMIC_4B)
		size = 4;
	else if (d->opmod == DVX_MLX5_OPMOD_EXT_ATOMIC_8B)
		size = 8;
	else
		return -EINVAL;
	if ((d->atomic_size && d->atomic_size != size) || d->imm || d->nsge != 1 ||
	    s->length != size || d->is_inline || !ds_ok(d, cs && size == 8 ? 5 : 4))
		return -EINVAL;
	if (cs ? d->field_boundary != 0 : (d->compare || d->swap_mask || d->compare_mask))
		return -EINVAL;
	if (size == 4 && ((d->swap_add | d->compare | d->swap_mask | d->compare_mask |
			   d->field_boundary) >> 32))
		return -EINVAL;
	if (cs && size == 4)
		return dvx_mlx5_wqe_masked_cs32(wq, idx, d->fm_ce_se,
						&(struct dvx_mlx5_raddr){ d->raddr, d->rkey },
						&(struct dvx_mlx5_masked_cs){
							(uint32_t)d->compare,
							(uint32_t)d->compare_mask,
							(uint32_t)d->swap_add,
							(uint32_t)d->swap_mask },
						s->addr, s->lkey);
	if (cs)
		return dvx_mlx5_wqe_masked_cs64(wq, idx, d->fm_ce_se,
						&(struct dvx_mlx5_raddr){ d->raddr, d->rkey },
						&(struct dvx_mlx5_masked_cs){
							d->compare, d->compare_mask, d->swap_add,
							d->swap_mask },
						s->addr, s->lkey);
	if (size == 4)
		return dvx_mlx5_wqe_masked_fa32(wq, idx, d->fm_ce_se,
						&(struct dvx_mlx5_raddr){ d->raddr, d->rkey },
						(uint32_t)d->swap_add, (uint32_t)d->field_boundary,
						s->addr, s->lkey);
	return dvx_mlx5_wqe_masked_fa64(wq, idx, d->fm_ce_se,
					&(struct dvx_mlx5_raddr){ d->raddr, d->rkey }, d->swap_add,
					d->field_boundary, s->addr, s->lkey);
}

int dvx_mlx5_wqe_encode(const struct dvx_mlx5_wq *wq, uint32_t idx,
			const struct dvx_mlx5_wqe_desc *d)
{
	uint8_t kind;

	if (!wq || !wq->buf || !d)
		return -EINVAL;
	kind = kind_of(d->opcode);
	if (kind == DVX_MLX5_KIND_UNKNOWN)
		return opcode_names[d->opcode] ? -EOPNOTSUPP : -EINVAL;
	if ((d->kind && d->kind != kind) || d->signature)
		return -EINVAL;

	switch (kind) {
	case DVX_MLX5_KIND_NOP:
		if (d->opmod || d->imm || !ds_ok(d, 1))
			return -EINVAL;
		return dvx_mlx5_wqe_nop(wq, idx, d->fm_ce_se);
	case DVX_MLX5_KIND_RDMA:
		if (d->is_inline && d->opcode == DVX_MLX5_OPCODE_RDMA_READ)
			return -EINVAL;
		return encode_payload(wq, idx, d, 2);
	case DVX_MLX5_KIND_SEND:
		if (d->opcode == DVX_MLX5_OPCODE_SEND_INVAL)
			return -EOPNOTSUPP;	/* no builder */
		return encode_payload(wq, idx, d, 1);
	case DVX_MLX5_KIND_ATOMIC:
		return encode_atomic(wq, idx, d);
	case DVX_MLX5_KIND_MASKED_ATOMIC:
		return encode_masked(wq, idx, d);
	default:
		if (d->opcode == DVX_MLX5_OPCODE_WAIT && d->opmod != DVX_MLX5_OPMOD_WAIT_CQ_PI)
			return -EOPNOTSUPP;
		if (d->opmod || d->imm || !ds_ok(d, 2))
			return -EINVAL;
		if (d->opcode == DVX_MLX5_OPCODE_WAIT)
			return dvx_mlx5_wqe_wait_cq(wq, idx, d->fm_ce_se, d->wait_qpn_cqn,
						    d->wait_max_index);
		return dvx_mlx5_wqe_enable(wq, idx, d->opcode, d->fm_ce_se, d->wait_qpn_cqn,
					   d->wait_max_index);
	}
}

/* ------------------------------------------------------------------------- */
/* formatting                                                                */

struct out {
	char *buf;
	size_t len;
	size_t pos;
};

static void out_init(struct out *o, char *buf, size_t len)
{
	o->buf = len ? buf : NULL;
	o->len = o->buf ? len : 0;
	o->pos = 0;
	if (o->len)
		o->buf[0] = '\0';
}

__attribute__((format(printf, 2, 3)))
static void put(struct out *o, const char *fmt, ...)
{
	size_t room = o->pos < o->len ? o->len - o->pos : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->pos : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

static void put_hex(struct out *o, const char *name, const uint8_t *p, uint32_t n)
{
	uint32_t i;

	put(o, "%s: ", name);
	if (!n)
		put(o, "(empty)");
	for (i = 0; i < n; i++)
		put(o, "%02x", p[i]);
	put(o, "\n");
}

/* a 4- or 8-byte atomic operand */
static void put_operand(struct out *o, const char *name, uint64_t v, uint8_t size)
{
	if (size == 4)
		put(o, "%s: 0x%08" PRIx64 "\n", name, v);
	else
		put(o, "%s: 0x%016" PRIx64 "\n", name, v);
}

static void put_sges(struct out *o, const struct dvx_mlx5_wqe_desc *d)
{
	uint32_t i, n = d->nsge < DVX_MLX5_DECODE_MAX_SGE ? d->nsge : DVX_MLX5_DECODE_MAX_SGE;

	put(o, "sge_count: %" PRIu32 "\n", d->nsge);
	for (i = 0; i < n; i++) {
		put(o, "sge[%" PRIu32 "].byte_count: %" PRIu32 "\n", i, d->sge[i].length);
		put(o, "sge[%" PRIu32 "].lkey: 0x%08" PRIx32 "\n", i, d->sge[i].lkey);
		put(o, "sge[%" PRIu32 "].addr: 0x%016" PRIx64 "\n", i, d->sge[i].addr);
	}
}

static void put_payload(struct out *o, const struct dvx_mlx5_wqe_desc *d, uint32_t first)
{
	put(o, "inline: %u\n", d->is_inline);
	if (d->is_inline) {
		/* only the bytes within ds were read */
		uint32_t room = d->ds > first ? (d->ds - first) * DVX_MLX5_DS_BYTES - 4 : 0;
		uint32_t n = d->inline_len < room ? d->inline_len : room;

		if (n > sizeof(d->inline_data))
			n = sizeof(d->inline_data);
		put(o, "inline_len: %" PRIu32 "\n", d->inline_len);
		put_hex(o, "inline_data", d->inline_data, n);
	} else {
		put_sges(o, d);
	}
}

static const char *wait_on_name(uint8_t opmod)
{
	switch (opmod) {
	case DVX_MLX5_OPMOD_WAIT_CQ_PI: return "cq";
	case DVX_MLX5_OPMOD_WAIT_DATA: return "data";
	case DVX_MLX5_OPMOD_WAIT_TIME: return "time";
	default: return "unknown";
	}
}

size_t dvx_mlx5_wqe_format(const struct dvx_mlx5_wqe_desc *d, char *buf, size_t len)
{
	uint8_t fm = (d->fm_ce_se & DVX_MLX5_WQE_CTRL_FM_MASK) >> DVX_MLX5_WQE_CTRL_FM_SHIFT;
	uint8_t ce = (d->fm_ce_se & DVX_MLX5_WQE_CTRL_CE_MASK) >> DVX_MLX5_WQE_CTRL_CE_SHIFT;
	struct out o;

	out_init(&o, buf, len);
	put(&o, "opcode: %s (0x%02x)\n", dvx_mlx5_opcode_name(d->opcode), d->opcode);
	put(&o, "opmod: 0x%02x\n", d->opmod);
	put(&o, "wqe_index: %u\n", d->idx);
	put(&o, "qpn: 0x%06" PRIx32 "\n", d->qpn);
	put(&o, "ds: %u\n", d->ds);
	put(&o, "wqebbs: %u\n", d->nwqebb);
	put(&o, "signature: 0x%02x\n", d->signature);
	put(&o, "fence: %s (%u)\n", dvx_mlx5_fm_name(fm), fm);
	put(&o, "completion: %s (%u)\n", dvx_mlx5_ce_name(ce), ce);
	put(&o, "solicited: %u\n", (d->fm_ce_se & DVX_MLX5_WQE_CTRL_SOLICITED) ? 1u : 0u);
	put(&o, "imm: 0x%08" PRIx32 "\n", d->imm);

	/* nothing past ctrl was read: print no segment fields rather than zeros */
	if (d->error == DVX_MLX5_WQE_ERR_DS_ZERO || d->error == DVX_MLX5_WQE_ERR_DS_RING ||
	    (d->ds < 2 && d->kind != DVX_MLX5_KIND_SEND))
		goto out;

	switch (d->kind) {
	case DVX_MLX5_KIND_RDMA:
		put(&o, "raddr: 0x%016" PRIx64 "\n", d->raddr);
		put(&o, "rkey: 0x%08" PRIx32 "\n", d->rkey);
		put_payload(&o, d, 2);
		break;
	case DVX_MLX5_KIND_SEND:
		if (d->opcode == DVX_MLX5_OPCODE_SEND_INVAL)
			put(&o, "invalidate_rkey: 0x%08" PRIx32 "\n", d->imm);
		put_payload(&o, d, 1);
		break;
	case DVX_MLX5_KIND_ATOMIC:
	case DVX_MLX5_KIND_MASKED_ATOMIC:
		if (!d->atomic_size)	/* masked atomic with a bad opmod: nothing read */
			break;
		put(&o, "raddr: 0x%016" PRIx64 "\n", d->raddr);
		put(&o, "rkey: 0x%08" PRIx32 "\n", d->rkey);
		put(&o, "atomic_size: %u\n", d->atomic_size);
		if (d->opcode == DVX_MLX5_OPCODE_ATOMIC_CS ||
		    d->opcode == DVX_MLX5_OPCODE_ATOMIC_MASKED_CS) {
			put_operand(&o, "compare", d->compare, d->atomic_size);
			if (d->kind == DVX_MLX5_KIND_MASKED_ATOMIC)
				put_operand(&o, "compare_mask", d->compare_mask, d->atomic_size);
			put_operand(&o, "swap", d->swap_add, d->atomic_size);
			if (d->kind == DVX_MLX5_KIND_MASKED_ATOMIC)
				put_operand(&o, "swap_mask", d->swap_mask, d->atomic_size);
		} else {
			put_operand(&o, "add", d->swap_add, d->atomic_size);
			if (d->kind == DVX_MLX5_KIND_MASKED_ATOMIC)
				put_operand(&o, "field_boundary", d->field_boundary,
					    d->atomic_size);
			else
				put_operand(&o, "compare", d->compare, 8);
		}
		put_sges(&o, d);
		break;
	case DVX_MLX5_KIND_WAIT:
		if (d->opcode == DVX_MLX5_OPCODE_WAIT) {
			put(&o, "wait_on: %s (%u)\n", wait_on_name(d->opmod), d->opmod);
			if (d->opmod != DVX_MLX5_OPMOD_WAIT_CQ_PI) {
				put_hex(&o, "wait_segment", d->raw, d->raw_len);
				break;
			}
		}
		put(&o, "wait_max_index: %" PRIu32 "\n", d->wait_max_index);
		if (d->opcode == DVX_MLX5_OPCODE_WAIT)
			put(&o, "wait_cqn: 0x%06" PRIx32 "\n", d->wait_qpn_cqn);
		else
			put(&o, "slave_qpn: 0x%06" PRIx32 "\n", d->wait_qpn_cqn);
		break;
	default:
		break;
	}
out:
	if (d->error)
		put(&o, "error: %s\n", dvx_mlx5_wqe_error_str(d->error));
	return o.pos;
}

/* the errnos dvx_mlx5_cqe_parse() returns */
static const char *errno_name(int err)
{
	switch (-err) {
	case 0: return "ok";
	case EMSGSIZE: return "EMSGSIZE";
	case EINVAL: return "EINVAL";
	case EACCES: return "EACCES";
	case ECANCELED: return "ECANCELED";
	case EPROTO: return "EPROTO";
	case EFAULT: return "EFAULT";
	case EREMOTEIO: return "EREMOTEIO";
	case EPERM: return "EPERM";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case ENOBUFS: return "ENOBUFS";
	case ECONNABORTED: return "ECONNABORTED";
	case EIO: return "EIO";
	case EBADMSG: return "EBADMSG";
	default: return "errno";
	}
}

static const char *cqe_format_name(uint8_t format)
{
	switch (format) {
	case DVX_MLX5_CQE_FORMAT_NORMAL: return "normal";
	case DVX_MLX5_CQE_FORMAT_INLINE32: return "inline_scatter_32";
	case DVX_MLX5_CQE_FORMAT_INLINE64: return "inline_scatter_64";
	default: return "compressed";
	}
}

size_t dvx_mlx5_cqe_format(const struct dvx_mlx5_cqe_info *info, int err, char *buf, size_t len)
{
	int requester = info->opcode == DVX_MLX5_CQE_REQ || info->opcode == DVX_MLX5_CQE_REQ_ERR;
	struct out o;

	out_init(&o, buf, len);
	if (info->format == DVX_MLX5_CQE_FORMAT_COMPRESSED) {
		/* the rest of the entry is a mini-CQE array: none of it is a normal field */
		put(&o, "format: compressed (3)\n");
		put(&o, "owner: %u\n", info->owner);
		put(&o, "compressed: yes - this entry belongs to a compressed CQE block "
			"(mini-CQEs, cqc.cqe_comp_en=1); its bytes are not a normal CQE and are "
			"not decoded\n");
		put(&o, "status: %s (%d)\n", errno_name(err), err);
		return o.pos;
	}
	put(&o, "opcode: %s (0x%02x)\n", dvx_mlx5_cqe_opcode_name(info->opcode), info->opcode);
	put(&o, "format: %s (%u)\n", cqe_format_name(info->format), info->format);
	put(&o, "owner: %u\n", info->owner);
	put(&o, "solicited: %u\n", info->se);
	put(&o, "qpn: 0x%06" PRIx32 "\n", info->qpn);
	put(&o, "wqe_counter: %u\n", info->wqe_counter);
	if (requester)
		put(&o, "wqe_opcode: %s (0x%02x)\n", dvx_mlx5_opcode_name(info->wqe_opcode),
		    info->wqe_opcode);
	put(&o, "byte_cnt: %" PRIu32 "\n", info->byte_cnt);
	put(&o, "imm: 0x%08" PRIx32 "\n", info->imm);
	put(&o, "srqn_uidx: 0x%06" PRIx32 "\n", info->srqn_uidx);
	put(&o, "rqpn: 0x%06" PRIx32 "\n", info->rqpn);
	put(&o, "slid: 0x%04x\n", info->slid);
	put(&o, "timestamp: 0x%016" PRIx64 "\n", info->timestamp);
	put(&o, "status: %s (%d)\n", errno_name(err), err);

	switch (info->opcode) {
	case DVX_MLX5_CQE_REQ_ERR:
	case DVX_MLX5_CQE_RESP_ERR: {
		const char *vc = dvx_mlx5_vendor_syndrome_cause(info->vendor_syndrome);

		put(&o, "syndrome: %s (0x%02x)\n", dvx_mlx5_syndrome_name(info->syndrome),
		    info->syndrome);
		if (vc)
			put(&o, "vendor_syndrome: 0x%02x (%s)\n", info->vendor_syndrome,
			    dvx_mlx5_vendor_syndrome_name(info->vendor_syndrome));
		else
			put(&o, "vendor_syndrome: 0x%02x\n", info->vendor_syndrome);
		put(&o, "hw_err_synd: 0x%02x\n", info->hw_err_synd);
		put(&o, "hw_synd_type: 0x%02x\n", info->hw_synd_type);
		put(&o, "cause: %s\n", dvx_mlx5_syndrome_cause(info->syndrome));
		if (vc)
			put(&o, "vendor_cause: %s\n", vc);
		if (requester)
			put(&o, "failed_wqe_opcode: %s (0x%02x)\n",
			    dvx_mlx5_opcode_name(info->wqe_opcode), info->wqe_opcode);
		else
			put(&o, "failed_wqe_opcode: receive WQE (responder error; byte 56 is "
				"0x%02x, not a send opcode)\n", info->wqe_opcode);
		put(&o, "failed_wqe_qpn: 0x%06" PRIx32 "\n", info->qpn);
		put(&o, "failed_wqe_index: %u\n", info->wqe_counter);
		break;
	}
	case DVX_MLX5_CQE_SIG_ERR:
		put(&o, "note: signature error: the WQE or data signature check failed\n");
		break;
	case DVX_MLX5_CQE_RESIZE_CQ:
	case DVX_MLX5_CQE_NO_PACKET:
		put(&o, "note: not a work completion\n");
		break;
	case DVX_MLX5_CQE_INVALID:
		put(&o, "note: opcode INVALID: hardware has not written this entry (dvx "
			"initialises rings with op_own 0xf1)\n");
		break;
	default:
		if (!cqe_opcode_names[info->opcode & 0xf])
			put(&o, "note: unknown CQE opcode\n");
		break;
	}
	return o.pos;
}
