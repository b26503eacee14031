/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/decode.h - decoders and pretty-printers for WQEs and CQEs.
 *
 * The decoder reads WQE bytes the way the PRM defines them (prm 2, 4), independently
 * of the builders in dvx/mlx5/wqe.h, so that one checks the other. The formatters write
 * "name: value" lines into a caller buffer; the library prints nothing itself. Used by
 * dvx-wqe, the tests, and anyone who needs to read a ring dump.
 */
#ifndef DVX_MLX5_DECODE_H
#define DVX_MLX5_DECODE_H

#include <dvx/mlx5/wqe.h>
#include <dvx/mlx5/cqe.h>

DVX_BEGIN_DECLS

/* Largest number of data segments a decoded WQE can hold (a SEND of ds 63: all but ctrl). */
#define DVX_MLX5_DECODE_MAX_SGE 62u
/* Bytes of an undecoded segment kept in dvx_mlx5_wqe_desc.raw (WAIT opmod 1/2: 32 B). */
#define DVX_MLX5_DECODE_RAW_BYTES 32u

/* enum dvx_mlx5_wqe_desc.kind: the segment layout found after the ctrl segment */
enum dvx_mlx5_wqe_kind {
	DVX_MLX5_KIND_UNKNOWN = 0,
	DVX_MLX5_KIND_NOP,		/* ctrl only */
	DVX_MLX5_KIND_RDMA,		/* ctrl, raddr, data* | inline  (WRITE, WRITE_IMM, READ) */
	DVX_MLX5_KIND_SEND,		/* ctrl, data* | inline          (SEND, SEND_IMM, SEND_INVAL) */
	DVX_MLX5_KIND_ATOMIC,		/* ctrl, raddr, atomic, data     (CS, FA) */
	DVX_MLX5_KIND_MASKED_ATOMIC,	/* ctrl, raddr, masked, data     (masked CS, FA; 4 and 8 B) */
	DVX_MLX5_KIND_WAIT,		/* ctrl, wait                    (WAIT, SEND_EN, RECV_EN) */
};

/**
 * enum dvx_mlx5_wqe_err - why dvx_mlx5_wqe_decode() returned -EBADMSG
 * (dvx_mlx5_wqe_desc.error; dvx_mlx5_wqe_error_str() gives the text).
 */
enum dvx_mlx5_wqe_err {
	DVX_MLX5_WQE_OK = 0,
	DVX_MLX5_WQE_ERR_OPCODE,	/* opcode not in the PRM table */
	DVX_MLX5_WQE_ERR_UNDECODED,	/* a named opcode dvx does not decode (DUMP, UMR, ...) */
	DVX_MLX5_WQE_ERR_DS_ZERO,	/* ds 0 (an empty or never-written WQEBB reads this way) */
	DVX_MLX5_WQE_ERR_DS_RING,	/* the WQE is larger than the whole ring */
	DVX_MLX5_WQE_ERR_DS_SHORT,	/* ds smaller than the opcode's fixed segments */
	DVX_MLX5_WQE_ERR_DS_LONG,	/* ds past the layout (atomics, WAIT, after an inline seg) */
	DVX_MLX5_WQE_ERR_INLINE_LEN,	/* the inline length runs past ds */
	DVX_MLX5_WQE_ERR_INLINE_READ,	/* inline data on an RDMA READ */
	DVX_MLX5_WQE_ERR_BYTE_COUNT,	/* a data segment after the first has byte_count[31] set */
	DVX_MLX5_WQE_ERR_OPMOD,		/* a masked atomic's opmod is neither 0x08 nor 0x09 */
	DVX_MLX5_WQE_ERR_MAX
};

/**
 * struct dvx_mlx5_wqe_desc - one WQE, every field in CPU order.
 * @kind:	enum dvx_mlx5_wqe_kind
 * @opcode:	ctrl opcode
 * @opmod:	ctrl opmod
 * @ds:		ctrl ds (16-byte units)
 * @nwqebb:	WQEBBs the WQE occupies, ceil(ds / 4)
 * @fm_ce_se:	the raw ctrl byte 11 (see DVX_MLX5_WQE_CTRL_*)
 * @signature:	ctrl byte 8
 * @idx:	the wqe index written in the ctrl segment
 * @qpn:	QPN from the ctrl segment
 * @imm:	ctrl bytes 12-15 (immediate, or invalidate rkey for SEND_INVAL)
 * @raddr:	remote address (RDMA, atomics)
 * @rkey:	remote key
 * @atomic_size: 4 or 8 (atomics)
 * @error:	enum dvx_mlx5_wqe_err: why decoding stopped (0 when it did not)
 * @swap_add:	CS: new value; FA: addend; masked: swap data / add data
 * @compare:	CS: expected value; masked CS: compare data
 * @swap_mask:	masked CS
 * @compare_mask: masked CS
 * @field_boundary: masked FA
 * @nsge:	data segments
 * @sge:	the data segments, in WQE order, zero-length ones included
 * @is_inline:	1 when the data is inline
 * @inline_len:	inline payload length (as the segment header states it)
 * @inline_data: the inline payload (the part of it that lies within ds)
 * @wait_max_index: WAIT / SEND_EN / RECV_EN index
 * @wait_qpn_cqn: WAIT: CQN; SEND_EN/RECV_EN: slave QPN
 * @raw_len:	bytes in @raw
 * @raw:	a segment the decoder reports without interpreting it (the 32-byte
 *		segment of WAIT opmod 1/2, wait on data / on time)
 */
struct dvx_mlx5_wqe_desc {
	uint8_t kind;
	uint8_t opcode;
	uint8_t opmod;
	uint8_t ds;
	uint8_t nwqebb;
	uint8_t fm_ce_se;
	uint8_t signature;
	uint8_t is_inline;
	uint16_t idx;
	uint8_t atomic_size;
	uint8_t error;
	uint32_t qpn;
	uint32_t imm;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t nsge;
	uint64_t swap_add;
	uint64_t compare;
	uint64_t swap_mask;
	uint64_t compare_mask;
	uint64_t field_boundary;
	uint32_t wait_max_index;
	uint32_t wait_qpn_cqn;
	uint32_t inline_len;
	uint32_t raw_len;
	struct dvx_mlx5_sge sge[DVX_MLX5_DECODE_MAX_SGE];
	uint8_t inline_data[DVX_MLX5_MAX_WQE_BYTES];
	uint8_t raw[DVX_MLX5_DECODE_RAW_BYTES];
};

/**
 * dvx_mlx5_wqe_decode() - decode the WQE that starts at WQEBB @idx of a ring dump.
 * @ring:	the ring bytes
 * @ring_bytes:	ring size, a power-of-two multiple of 64; reads wrap at its end
 * @idx:	WQEBB index (taken modulo the ring)
 * @d:		filled as far as the bytes allow (zeroed first)
 *
 * Reads the bytes at the PRM offsets (prm 2.2-2.7), one byte at a time, so a WQE
 * that runs past the ring's end continues at byte 0. Only segments that lie within
 * ds are read. Reserved bytes are not checked.
 *
 * Context: any; pure (no allocation, no printing).
 * Return: WQEBBs occupied (>= 1); -EINVAL for bad arguments (NULL, a ring size that is
 * not a power-of-two multiple of 64); -EBADMSG when the bytes are not a well-formed
 * WQE (ds 0, ds too small or too large for the opcode's segments, an inline length
 * that runs past ds, an unknown opcode, ...), with @d holding what was read and
 * @d->error saying why (enum dvx_mlx5_wqe_err).
 */
int dvx_mlx5_wqe_decode(const void *ring, uint32_t ring_bytes, uint32_t idx,
			struct dvx_mlx5_wqe_desc *d);

/**
 * dvx_mlx5_wqe_encode() - build the WQE described by @d at @idx with the builders.
 * @wq:		the ring to write into (its qpn and max_inline apply)
 * @idx:	WQEBB index (producer counter) of the WQE
 * @d:		what to build, as dvx_mlx5_wqe_decode() describes it
 *
 * Dispatches on @d->opcode to the builder of dvx/mlx5/wqe.h, so a WQE decoded from a
 * builder's bytes re-encodes to the same bytes. @d->idx and @d->qpn are ignored (the
 * ring supplies them); @d->ds and @d->nwqebb are derived, and when non-zero must equal
 * what the builder will produce. A description no builder can reproduce is refused
 * rather than approximated: a zero-length data segment (builders skip those), a
 * non-zero signature, an opmod or immediate the builder does not write, a standard
 * FA with a non-zero compare, an atomic result segment whose length is not the
 * operand size, operands wider than a 4-byte masked atomic.
 *
 * Context: any; pure. The caller owns the ring and reserves the slots.
 * Return: WQEBBs written; -EINVAL (not reproducible, or bad arguments),
 * -EOPNOTSUPP (SEND_INVAL, WAIT opmod != 0 and the undecoded opcodes have no builder),
 * -E2BIG / -EMSGSIZE from the builders (too many segments, inline above the ring's
 * limit). Nothing is written on error.
 */
int dvx_mlx5_wqe_encode(const struct dvx_mlx5_wq *wq, uint32_t idx,
			const struct dvx_mlx5_wqe_desc *d);

/**
 * dvx_mlx5_wqe_format() - "name: value" lines for a decoded WQE.
 * @d:		from dvx_mlx5_wqe_decode() (also after -EBADMSG: an "error:" line says why)
 * @buf:	output, may be NULL when @len is 0
 * @len:	size of @buf
 *
 * The line names are listed in mlx5/decode.c's header comment and are stable.
 * Return: the length the full text needs (snprintf semantics); @buf is always
 * NUL-terminated when @len > 0.
 */
size_t dvx_mlx5_wqe_format(const struct dvx_mlx5_wqe_desc *d, char *buf, size_t len);

/**
 * dvx_mlx5_cqe_format() - "name: value" lines for a CQE; for an error CQE also the
 * syndrome's name, its likely cause and the failed WQE's opcode, QPN and index.
 * @info:	from dvx_mlx5_cqe_parse()
 * @err:	what dvx_mlx5_cqe_parse() returned
 * @buf:	output, may be NULL when @len is 0
 * @len:	size of @buf
 *
 * A compressed CQE (format 3) is reported as such and nothing else of it is read.
 * Return: as dvx_mlx5_wqe_format().
 */
size_t dvx_mlx5_cqe_format(const struct dvx_mlx5_cqe_info *info, int err, char *buf, size_t len);

/**
 * dvx_mlx5_opcode_name() - name of a send opcode.
 * @opcode:	ctrl opcode (prm 2.2)
 * Return: "RDMA_WRITE" for 0x08 etc.; "UNKNOWN" for unnamed values. Never NULL.
 */
const char *dvx_mlx5_opcode_name(uint8_t opcode);

/**
 * dvx_mlx5_opcode_from_name() - the send opcode for a name or number.
 * @name:	an opcode name, case-insensitive, '-' and '_' alike, with or without a
 *		"DVX_MLX5_OPCODE_", "MLX5_OPCODE_" or "OPCODE_" prefix; a few aliases
 *		(WRITE, WRITE_IMM, READ, MASKED_CS, MASKED_FA, CQE_WAIT,
 *		SEND_ENABLE, RECV_ENABLE); or a number in hex, with or without "0x"
 *		(names are tried first; no name or alias is also a hex number)
 * Return: the opcode (0..255), or -EINVAL.
 */
int dvx_mlx5_opcode_from_name(const char *name);

/**
 * dvx_mlx5_cqe_opcode_name() - name of a CQE opcode (op_own[7:4]).
 * Return: "REQ", "RESP_WR_IMM", "REQ_ERR", ...; "UNKNOWN". Never NULL.
 */
const char *dvx_mlx5_cqe_opcode_name(uint8_t opcode);

/**
 * dvx_mlx5_syndrome_name() - name of an error-CQE syndrome (byte 55, prm 4.5).
 * Return: "REMOTE_ACCESS_ERR" for 0x13 etc.; "UNKNOWN" otherwise. Never NULL.
 */
const char *dvx_mlx5_syndrome_name(uint8_t syndrome);

/**
 * dvx_mlx5_syndrome_cause() - the likely cause of an error-CQE syndrome in plain words
 * (bad lkey, bad rkey or bounds, retry exhausted, flush after an earlier error, ...).
 * Return: a sentence; never NULL.
 */
const char *dvx_mlx5_syndrome_cause(uint8_t syndrome);

/**
 * dvx_mlx5_vendor_syndrome_name() - name of a known vendor_err_synd (byte 54):
 * "ODP" for 0x93, "PSN" for 0x99; "UNKNOWN" otherwise. Never NULL.
 */
const char *dvx_mlx5_vendor_syndrome_name(uint8_t vendor_syndrome);

/**
 * dvx_mlx5_vendor_syndrome_cause() - what a known vendor syndrome means, or NULL
 * when it is not one dvx knows.
 */
const char *dvx_mlx5_vendor_syndrome_cause(uint8_t vendor_syndrome);

/**
 * dvx_mlx5_fm_name() - name of a fence mode (fm_ce_se[7:5], enum dvx_mlx5_fm).
 * Return: "none", "initiator_small", "fence", "strong_ordering",
 * "fence_and_initiator_small"; "reserved" for 5-7 and "UNKNOWN" above. Never NULL.
 */
const char *dvx_mlx5_fm_name(uint8_t fm);

/**
 * dvx_mlx5_ce_name() - name of a completion mode (fm_ce_se[3:2], enum dvx_mlx5_ce).
 * Return: "error_only", "first_error", "always", "cqe_and_eqe"; "UNKNOWN" above 3.
 */
const char *dvx_mlx5_ce_name(uint8_t ce);

/**
 * dvx_mlx5_wqe_error_str() - what an enum dvx_mlx5_wqe_err means.
 * Return: a phrase ("ds is 0", ...); "ok" for 0; never NULL.
 */
const char *dvx_mlx5_wqe_error_str(uint8_t err);

DVX_END_DECLS

#endif /* DVX_MLX5_DECODE_H */
