// SPDX-License-Identifier: MIT
/*
 * tools/dvx-wqe.c - decode mlx5 WQEs, ring dumps and CQEs; build any WQE kind.
 *
 *   dvx-wqe decode [--cqe | --ring N [--index I]]  < hex
 *   dvx-wqe encode KIND [--field value ...]
 *
 * Decoding goes through dvx_mlx5_wqe_decode() (which reads the PRM offsets itself),
 * encoding through the builders of dvx/mlx5/wqe.h, so piping one into the other checks
 * both. The command line is parsed by tools/wqe-cli.c (shared with the libFuzzer
 * harness tests/fuzz/lf/hex.c); this file runs what it asks for. Exit status: 0 done; 1 input that cannot be decoded (bad hex, too few bytes,
 * a malformed WQE); 2 usage errors (unknown kind or option, a value too large for its
 * field, a missing required field).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <dvx/mlx5/decode.h>

#include "hexparse.h"
#include "tool.h"
#include "wqe-cli.h"

#define EXIT_INPUT DVX_EXIT_FAIL
#define EXIT_USAGE DVX_EXIT_USAGE

/* the scratch ring a single WQE is decoded or built in: fits the largest WQE (ds 63) */
#define SCRATCH_WQEBB 16u
#define SCRATCH_BYTES (SCRATCH_WQEBB * DVX_MLX5_SEND_WQE_BB)

static const char *prog = "dvx-wqe";

/* ---- reading stdin ---- */

static char *read_all(FILE *f, size_t *n)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	for (;;) {
		size_t got;

		if (len == cap) {
			char *nb;

			if (cap >= (64u << 20)) {	/* a 32768-WQEBB ring is ~6 MiB of hex */
				free(buf);
				errno = E2BIG;
				return NULL;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	*n = len;
	return buf;
}

/* stdin as bytes; on failure prints why and returns NULL */
static uint8_t *read_hex_stdin(size_t *nbytes)
{
	char err[256];
	size_t n;
	char *text = read_all(stdin, &n);
	uint8_t *bytes;
	int rc;

	if (!text) {
		fprintf(stderr, "%s: reading stdin: %s\n", prog, strerror(errno));
		return NULL;
	}
	bytes = malloc(n / 2 + 1);
	if (!bytes) {
		free(text);
		fprintf(stderr, "%s: out of memory\n", prog);
		return NULL;
	}
	rc = dvx_hexparse(text, n, bytes, n / 2 + 1, nbytes, err, sizeof(err));
	free(text);
	if (rc) {
		fprintf(stderr, "%s: bad hex input: %s\n", prog, err);
		free(bytes);
		return NULL;
	}
	return bytes;
}

static void print_text(size_t (*fmt)(const void *, char *, size_t), const void *obj)
{
	size_t need = fmt(obj, NULL, 0);
	char *s = malloc(need + 1);

	if (!s) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(EXIT_INPUT);
	}
	fmt(obj, s, need + 1);
	fputs(s, stdout);
	free(s);
}

static size_t fmt_wqe(const void *d, char *buf, size_t len)
{
	return dvx_mlx5_wqe_format((const struct dvx_mlx5_wqe_desc *)d, buf, len);
}

struct cqe_and_err {
	struct dvx_mlx5_cqe_info info;
	int err;
};

static size_t fmt_cqe(const void *p, char *buf, size_t len)
{
	const struct cqe_and_err *c = (const struct cqe_and_err *)p;

	return dvx_mlx5_cqe_format(&c->info, c->err, buf, len);
}

/* ---- decode ---- */

static int decode_one(const uint8_t *bytes, size_t n)
{
	static uint8_t ring[SCRATCH_BYTES] DVX_ALIGNED(64);
	static struct dvx_mlx5_wqe_desc d;
	unsigned ds;
	int rc;

	if (n < DVX_MLX5_DS_BYTES) {
		fprintf(stderr, "%s: too few bytes: a WQE starts with a 16-byte ctrl segment, "
			"got %zu\n", prog, n);
		return EXIT_INPUT;
	}
	if (n > SCRATCH_BYTES) {
		fprintf(stderr, "%s: %zu bytes is more than one WQE (at most %u bytes, ds 63); "
			"for a ring dump use --ring N\n", prog, n, DVX_MLX5_MAX_WQE_BYTES);
		return EXIT_INPUT;
	}
	ds = bytes[7] & 0x3fu;
	if (n < ds * DVX_MLX5_DS_BYTES) {
		fprintf(stderr, "%s: too few bytes: ds %u needs %u bytes, got %zu\n", prog, ds,
			ds * DVX_MLX5_DS_BYTES, n);
		return EXIT_INPUT;
	}
	memset(ring, 0, sizeof(ring));
	memcpy(ring, bytes, n);
	rc = dvx_mlx5_wqe_decode(ring, sizeof(ring), 0, &d);
	print_text(fmt_wqe, &d);
	fflush(stdout);
	if (rc < 0) {
		fprintf(stderr, "%s: malformed WQE: %s\n", prog, dvx_mlx5_wqe_error_str(d.error));
		return EXIT_INPUT;
	}
	if (n > (size_t)rc * DVX_MLX5_SEND_WQE_BB)
		fprintf(stderr, "%s: note: %zu bytes after this WQE's %d WQEBB(s) not decoded "
			"(for several WQEs use --ring N)\n", prog,
			n - (size_t)rc * DVX_MLX5_SEND_WQE_BB, rc);
	return 0;
}

static int decode_cqe(const uint8_t *bytes, size_t n)
{
	struct dvx_mlx5_cqe64 cqe;
	struct cqe_and_err c;

	if (n != DVX_MLX5_CQE_SIZE) {
		fprintf(stderr, "%s: --cqe needs exactly 64 bytes, got %zu%s\n", prog, n,
			n == 128 ? " (of a 128-byte CQE pass the second half)" : "");
		return EXIT_INPUT;
	}
	memcpy(&cqe, bytes, sizeof(cqe));
	memset(&c, 0, sizeof(c));
	c.err = dvx_mlx5_cqe_parse(&cqe, &c.info);
	print_text(fmt_cqe, &c);
	return 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int decode_ring(const uint8_t *bytes, size_t n, uint32_t nwqebb, uint32_t start)
{
	static struct dvx_mlx5_wqe_desc d;
	uint32_t ring_bytes = nwqebb * DVX_MLX5_SEND_WQE_BB;
	uint32_t slot = start & (nwqebb - 1), done = 0, nbad = 0;

	if (n != ring_bytes) {
		fprintf(stderr, "%s: %s bytes: a ring of %u WQEBBs is %u bytes, got %zu\n", prog,
			n < ring_bytes ? "too few" : "too many", nwqebb, ring_bytes, n);
		return EXIT_INPUT;
	}
	while (done < nwqebb) {
		uint32_t step = 1;
		int rc;

		printf("--- wqebb %u ---\n", slot);
		if (all_zero(bytes + (size_t)slot * DVX_MLX5_SEND_WQE_BB, DVX_MLX5_SEND_WQE_BB)) {
			printf("empty: all-zero WQEBB\n");
		} else {
			rc = dvx_mlx5_wqe_decode(bytes, ring_bytes, slot, &d);
			print_text(fmt_wqe, &d);
			if (rc < 0) {
				nbad++;
			} else {
				step = (uint32_t)rc;
				if ((d.idx & (nwqebb - 1)) != slot)
					printf("note: wqe_index %u does not belong at WQEBB %u "
					       "(stale WQE, or a dump taken at another index?)\n",
					       d.idx, slot);
				if (done + step > nwqebb)
					printf("note: this WQE runs on over WQEBB %u, where the "
					       "walk started\n", start & (nwqebb - 1));
			}
		}
		done += step;
		slot = (slot + step) & (nwqebb - 1);
	}
	fflush(stdout);
	if (nbad) {
		fprintf(stderr, "%s: %u malformed WQEBB(s) in the ring\n", prog, nbad);
		return EXIT_INPUT;
	}
	return 0;
}

static int run_decode(const struct dvx_wqe_cli *c)
{
	uint8_t *bytes;
	size_t n;
	int rc;

	bytes = read_hex_stdin(&n);
	if (!bytes)
		return EXIT_INPUT;
	if (!n) {
		fprintf(stderr, "%s: no input bytes\n", prog);
		rc = EXIT_INPUT;
	} else if (c->cqe) {
		rc = decode_cqe(bytes, n);
	} else if (c->ring) {
		rc = decode_ring(bytes, n, (uint32_t)c->nwqebb, (uint32_t)c->index);
	} else {
		rc = decode_one(bytes, n);
	}
	free(bytes);
	return rc;
}

/* ---- encode ---- */

static int run_encode(const struct dvx_wqe_cli *c)
{
	static uint8_t ring[SCRATCH_BYTES] DVX_ALIGNED(64);
	const struct dvx_wqe_encode_args *a = &c->enc;
	const char *kind = dvx_wqe_kind_name(c->kind);
	struct dvx_mlx5_wq wq;
	uint32_t i, slot;
	int n;

	for (i = 0; i < a->nsge; i++)
		if (!a->sge[i].length)
			fprintf(stderr, "%s: note: --sge %u has length 0; the builders leave such "
				"entries out\n", prog, i);

	memset(ring, 0, sizeof(ring));
	if (dvx_mlx5_wq_init(&wq, ring, SCRATCH_WQEBB, (uint32_t)a->v[DVX_WQE_F_QPN],
			     DVX_MLX5_MAX_INLINE)) {
		fprintf(stderr, "%s: internal error: scratch ring\n", prog);
		return EXIT_INPUT;
	}
	n = dvx_wqe_cli_build(c, &wq);
	if (n < 0) {
		if (n == -EMSGSIZE)
			fprintf(stderr, "%s: encode %s: inline payload of %zu bytes is above the "
				"inline limit (%u bytes)\n", prog, kind, a->data_len,
				DVX_MLX5_MAX_INLINE);
		else if (n == -E2BIG)
			fprintf(stderr, "%s: encode %s: %u data segments make ds exceed 63\n",
				prog, kind, a->nsge);
		else
			fprintf(stderr, "%s: encode %s: the builder refused: %s\n", prog,
				kind, strerror(-n));
		return EXIT_USAGE;
	}
	/* print the WQE's WQEBBs from its first byte, unwrapping the scratch ring */
	slot = (uint32_t)a->v[DVX_WQE_F_IDX] & (SCRATCH_WQEBB - 1);
	for (i = 0; i < (uint32_t)n * DVX_MLX5_SEND_WQE_BB; i++) {
		uint32_t off = (slot * DVX_MLX5_SEND_WQE_BB + i) & (SCRATCH_BYTES - 1);

		if (i % 16 == 0)
			printf("%04x:", i);
		printf(" %02x", ring[off]);
		if (i % 16 == 15)
			printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct dvx_wqe_cli c;

	switch (dvx_wqe_cli_parse(argc, argv, stderr, &c)) {
	case DVX_WQE_HELP_MAIN:
		dvx_wqe_usage_main(stdout);
		return 0;
	case DVX_WQE_HELP_DECODE:
		dvx_wqe_usage_decode(stdout);
		return 0;
	case DVX_WQE_HELP_ENCODE:
		dvx_wqe_usage_encode(stdout);
		return 0;
	case DVX_WQE_VERSION:
		dvx_tool_version(stdout, prog);
		return 0;
	case DVX_WQE_DECODE:
		return run_decode(&c);
	case DVX_WQE_ENCODE:
		return run_encode(&c);
	case DVX_WQE_USAGE_ERROR:
		break;
	}
	return EXIT_USAGE;
}
