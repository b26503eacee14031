/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/lf/lf.h - what the libFuzzer harnesses share (docs/testing.md, "Fuzzing").
 *
 * Each harness of this folder is one program, LLVMFuzzerTestOneInput() over one input
 * parser, built by scripts/fuzz.sh with clang (-fsanitize=fuzzer,address,undefined).
 * A harness checks its parser's contract, not only that it survives: LF_CHECK() prints
 * the broken rule and aborts, which libFuzzer reports as a crash and saves the input.
 *
 * Seeds: run a harness with DVX_FUZZ_WRITE_SEEDS=DIR and it writes its seed inputs
 * (made with the builders and the byte-exact tests' vectors) into DIR and exits;
 * 'scripts/fuzz.sh --seeds' rewrites tests/fuzz/corpus/ that way.
 */
#ifndef DVX_TESTS_FUZZ_LF_H
#define DVX_TESTS_FUZZ_LF_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static inline void lf_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "dvx fuzz: contract broken at %s:%d: %s\n", file, line, what);
	abort();
}

/* abort (a libFuzzer crash, input saved) unless @cond holds */
#define LF_CHECK(cond)                                          \
	do {                                                    \
		if (!(cond))                                    \
			lf_fail(__FILE__, __LINE__, #cond);     \
	} while (0)

/* a harness's own bookkeeping (copying its world back, checking guard bands) is not
 * what is fuzzed: kept out of libFuzzer's coverage and comparison tracing, which would
 * cost per loop turn and count its turns as features */
#if defined(__clang__)
#define LF_NO_COV __attribute__((no_sanitize("coverage")))
#else
#define LF_NO_COV
#endif

/* DVX_FUZZ_VERBOSE=1: harnesses say what they do with an input (to read a reproducer) */
static inline int lf_verbose(void)
{
	static int v = -1;

	if (v < 0)
		v = getenv("DVX_FUZZ_VERBOSE") != NULL;
	return v;
}

/* ---- reading the input: past its end every read gives zeros ---- */

struct lf_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t lf_u8(struct lf_in *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static inline uint16_t lf_u16(struct lf_in *in)
{
	uint16_t v = lf_u8(in);

	return (uint16_t)(v | (uint16_t)lf_u8(in) << 8);
}

static inline uint32_t lf_u32(struct lf_in *in)
{
	uint32_t v = lf_u16(in);

	return v | (uint32_t)lf_u16(in) << 16;
}

static inline uint64_t lf_u64(struct lf_in *in)
{
	uint64_t v = lf_u32(in);

	return v | (uint64_t)lf_u32(in) << 32;
}

/* @len bytes into @dst; what the input lacks is zero. Returns the bytes taken. */
static inline size_t lf_bytes(struct lf_in *in, void *dst, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	if (k)
		memcpy(dst, in->p, k);
	if (len > k)
		memset((uint8_t *)dst + k, 0, len - k);
	in->p += k;
	in->n -= k;
	return k;
}

/* ---- formatted text: the formatters' common contract ---- */

/*
 * fmt(NULL, 0) says how long the text is; the text written into a buffer of exactly that
 * many bytes plus one has that length, is printable ASCII and newlines, and any shorter
 * buffer (@cut bytes, 1..n) holds its NUL-terminated prefix.
 */
static inline void lf_check_text(size_t (*fmt)(const void *obj, char *buf, size_t len),
				 const void *obj, size_t cut)
{
	size_t n = fmt(obj, NULL, 0), i;
	char *full = malloc(n + 1), *part;

	LF_CHECK(full != NULL);
	LF_CHECK(fmt(obj, full, n + 1) == n);
	LF_CHECK(strlen(full) == n);
	for (i = 0; i < n; i++)
		LF_CHECK(full[i] == '\n' || (full[i] >= 0x20 && full[i] < 0x7f));
	cut = n ? 1 + cut % n : 1;	/* 1..n: always short of the whole text */
	part = malloc(cut);
	LF_CHECK(part != NULL);
	LF_CHECK(fmt(obj, part, cut) == n);
	LF_CHECK(strlen(part) == cut - 1);
	LF_CHECK(!memcmp(part, full, cut - 1));
	free(part);
	free(full);
}

/* ---- seeds ---- */

static const char *lf_seed_dir;

/* write one seed input, named @name, into the DVX_FUZZ_WRITE_SEEDS folder */
static inline void lf_seed(const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", lf_seed_dir, name);
	f = fopen(path, "wb");
	if (!f || (len && fwrite(buf, 1, len, f) != len) || fclose(f)) {
		fprintf(stderr, "dvx fuzz: cannot write seed %s\n", path);
		exit(1);
	}
}

/* from LLVMFuzzerInitialize(): with DVX_FUZZ_WRITE_SEEDS set, write the seeds and exit */
static inline void lf_seed_mode(void (*write_seeds)(void))
{
	lf_seed_dir = getenv("DVX_FUZZ_WRITE_SEEDS");
	if (!lf_seed_dir || !*lf_seed_dir)
		return;
	write_seeds();
	exit(0);
}

#endif /* DVX_TESTS_FUZZ_LF_H */
