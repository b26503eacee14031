/* SPDX-License-Identifier: MIT */
/*
 * tools/wqe-cli.h - dvx-wqe's command line: the parse, the usage texts, and the
 * builder call an "encode" line asks for. dvx-wqe.c runs what the parse says; the
 * libFuzzer harness tests/fuzz/lf/hex.c calls the same parse and builder.
 */
#ifndef DVX_TOOLS_WQE_CLI_H
#define DVX_TOOLS_WQE_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <dvx/mlx5/decode.h>

/* the largest ring --ring accepts: qpc.log_sq_size is at most 15 (prm 1.7) */
#define DVX_WQE_MAX_RING_WQEBB (1u << DVX_MLX5_LOG_MAX_SQ)

/* what the command line asks for */
enum dvx_wqe_action {
	DVX_WQE_USAGE_ERROR,	/* the parse wrote why to its error stream: exit 2 */
	DVX_WQE_HELP_MAIN,	/* print dvx_wqe_usage_main() to stdout: exit 0 */
	DVX_WQE_HELP_DECODE,	/* dvx_wqe_usage_decode() */
	DVX_WQE_HELP_ENCODE,	/* dvx_wqe_usage_encode() */
	DVX_WQE_VERSION,	/* --version */
	DVX_WQE_DECODE,		/* read hex from stdin and decode (@cqe, @ring, @nwqebb, @index) */
	DVX_WQE_ENCODE,		/* build @kind from @enc and print it */
};

/* encode's fields (--idx ... --solicited), bits of dvx_wqe_encode_args.given */
enum dvx_wqe_field {
	DVX_WQE_F_IDX, DVX_WQE_F_QPN, DVX_WQE_F_RADDR, DVX_WQE_F_RKEY, DVX_WQE_F_LADDR,
	DVX_WQE_F_LKEY, DVX_WQE_F_LEN, DVX_WQE_F_SGE, DVX_WQE_F_IMM, DVX_WQE_F_DATA,
	DVX_WQE_F_ADD, DVX_WQE_F_COMPARE, DVX_WQE_F_SWAP, DVX_WQE_F_COMPARE_MASK,
	DVX_WQE_F_SWAP_MASK, DVX_WQE_F_BOUNDARY, DVX_WQE_F_CQN, DVX_WQE_F_MAX_INDEX,
	DVX_WQE_F_SLAVE_QPN, DVX_WQE_F_FENCE, DVX_WQE_F_CE, DVX_WQE_F_SOLICITED,
	DVX_WQE_F_NFIELDS
};

/* the values of an encode line's fields */
struct dvx_wqe_encode_args {
	uint64_t v[DVX_WQE_F_NFIELDS];	/* plain numbers, by enum dvx_wqe_field */
	uint32_t given;			/* 1 << field for each field given */
	uint8_t fm, ce, se;		/* --fence, --ce, --solicited */
	struct dvx_mlx5_sge sge[DVX_MLX5_DECODE_MAX_SGE];
	uint32_t nsge;
	uint8_t data[DVX_MLX5_MAX_WQE_BYTES];	/* --data */
	size_t data_len;
};

/* a parsed command line */
struct dvx_wqe_cli {
	enum dvx_wqe_action action;
	/* decode */
	int cqe;		/* --cqe */
	int ring;		/* --ring given: @nwqebb WQEBBs (a power of two), from @index */
	uint64_t nwqebb;
	uint64_t index;
	/* encode */
	size_t kind;		/* index into the kinds (dvx_wqe_kind_name()) */
	struct dvx_wqe_encode_args enc;
};

/*
 * dvx_wqe_cli_parse() - parse dvx-wqe's argv (argv[0] is the program) into @c.
 * Every complaint goes to @err (dvx-wqe passes stderr), the first one ends the parse
 * with DVX_WQE_USAGE_ERROR; nothing is written to @err otherwise, and nothing to
 * stdout. @argv is only read. Returns @c->action.
 */
enum dvx_wqe_action dvx_wqe_cli_parse(int argc, char **argv, FILE *err, struct dvx_wqe_cli *c);

/* dvx_wqe_usage_main(), _decode(), _encode() - the --help texts */
void dvx_wqe_usage_main(FILE *f);
void dvx_wqe_usage_decode(FILE *f);
void dvx_wqe_usage_encode(FILE *f);

/* the kind's name ("write") and send opcode */
const char *dvx_wqe_kind_name(size_t kind);
uint8_t dvx_wqe_kind_opcode(size_t kind);

/*
 * dvx_wqe_cli_build() - build the WQE a DVX_WQE_ENCODE line describes into @wq at its
 * --idx, with the builders of dvx/mlx5/wqe.h. Returns the WQEBBs written or the
 * builder's negative errno.
 */
int dvx_wqe_cli_build(const struct dvx_wqe_cli *c, const struct dvx_mlx5_wq *wq);

#endif /* DVX_TOOLS_WQE_CLI_H */
