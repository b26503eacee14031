/* SPDX-License-Identifier: MIT */
/*
 * dvx/mlx5/decode.h - decoders and pretty-printers for WQEs and CQEs.
 *
 * The decoder reads WQE bytes the way the PRM defines them (facts 2, 4), independently
 * of the builders in dvx/mlx5/wqe.h, so that one checks the other. The formatters write
 * "name: value" lines into a caller buffer; the library prints nothing itself. Used by
 * dvx-wqe, the tests, and anyone who needs to read a ring dump.
 */
#ifndef DVX_MLX5_DECODE_H
#define DVX_MLX5_DECODE_H

#include <dvx/mlx5/wqe.h>
#include <dvx/mlx5/cq.h>

DVX_BEGIN_DECLS

/* Largest number of data segments a decoded WQE can hold (ds 63 - ctrl - raddr). */
#define DVX_MLX5_DECODE_MAX_SGE 61u

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
 * @swap_add:	CS: new value; FA: addend; masked: swap data / add data
 * @compare:	CS: expected value; masked CS: compare data
 * @swap_mask:	masked CS
 * @compare_mask: masked CS
 * @field_boundary: masked FA
 * @nsge:	data segments
 * @sge:	the data segments
 * @is_inline:	1 when the data is inline
 * @inline_len:	inline payload length
 * @inline_data: the inline payload
 * @wait_max_index: WAIT / SEND_EN / RECV_EN index
 * @wait_qpn_cqn: WAIT: CQN; SEND_EN/RECV_EN: slave QPN
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
	uint8_t rsvd;
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
	uint32_t rsvd2;
	struct dvx_mlx5_sge sge[DVX_MLX5_DECODE_MAX_SGE];
	uint8_t inline_data[DVX_MLX5_MAX_WQE_BYTES];
};

/**
 * dvx_mlx5_wqe_decode() - decode the WQE that starts at WQEBB @idx of a ring dump.
 * @ring:	the ring bytes
 * @ring_bytes:	ring size, a power-of-two multiple of 64; reads wrap at its end
 * @idx:	WQEBB index (taken modulo the ring)
 * @d:		filled as far as the bytes allow
 *
 * Return: WQEBBs occupied (>= 1); -EINVAL for bad arguments; -EBADMSG when the bytes
 * are not a well-formed WQE (ds 0, ds too small for the opcode's segments, an inline
 * length that runs past ds, an unknown opcode), with @d holding what was read.
 */
int dvx_mlx5_wqe_decode(const void *ring, uint32_t ring_bytes, uint32_t idx,
			struct dvx_mlx5_wqe_desc *d);

/**
 * dvx_mlx5_wqe_encode() - build the WQE described by @d at @idx with the builders.
 * @d->idx and @d->qpn are ignored (the ring supplies them); @d->ds/@d->nwqebb are
 * derived. Return: WQEBBs written or a negative errno (nothing written).
 */
int dvx_mlx5_wqe_encode(const struct dvx_mlx5_wq *wq, uint32_t idx,
			const struct dvx_mlx5_wqe_desc *d);

/**
 * dvx_mlx5_wqe_format() - "name: value" lines for a decoded WQE.
 * Return: the length the full text needs (snprintf semantics); @buf is always
 * NUL-terminated when @len > 0.
 */
size_t dvx_mlx5_wqe_format(const struct dvx_mlx5_wqe_desc *d, char *buf, size_t len);

/**
 * dvx_mlx5_cqe_format() - "name: value" lines for a CQE; for an error CQE also the
 * syndrome's name, its likely cause and the failed WQE's opcode, QPN and index.
 * @info:	from dvx_mlx5_cqe_parse()
 * @err:	what dvx_mlx5_cqe_parse() returned
 */
size_t dvx_mlx5_cqe_format(const struct dvx_mlx5_cqe_info *info, int err, char *buf, size_t len);

/** dvx_mlx5_opcode_name() - "RDMA_WRITE" for 0x08; "UNKNOWN" for unnamed values. */
const char *dvx_mlx5_opcode_name(uint8_t opcode);

/** dvx_mlx5_opcode_from_name() - the opcode for a name (case-insensitive), or -EINVAL. */
int dvx_mlx5_opcode_from_name(const char *name);

/** dvx_mlx5_cqe_opcode_name() - "REQ", "RESP_WR_IMM", "REQ_ERR", ...; "UNKNOWN". */
const char *dvx_mlx5_cqe_opcode_name(uint8_t opcode);

/** dvx_mlx5_syndrome_name() - "REMOTE_ACCESS_ERR" for 0x13; "UNKNOWN" otherwise. */
const char *dvx_mlx5_syndrome_name(uint8_t syndrome);

/**
 * dvx_mlx5_syndrome_cause() - the likely cause of an error-CQE syndrome in plain words
 * (bad lkey, bad rkey or bounds, retry exhausted, flush after an earlier error, ...).
 */
const char *dvx_mlx5_syndrome_cause(uint8_t syndrome);

/** dvx_mlx5_fm_name() / dvx_mlx5_ce_name() - names of fence and completion modes. */
const char *dvx_mlx5_fm_name(uint8_t fm);
const char *dvx_mlx5_ce_name(uint8_t ce);

DVX_END_DECLS

#endif /* DVX_MLX5_DECODE_H */
