// SPDX-License-Identifier: MIT
#include "dvx_test.h"

#include <ctype.h>

static void dump(const char *tag, const uint8_t *b, size_t n, size_t mark)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i % 16 == 0)
			print_error("%s %04zx:", tag, i);
		print_error(i == mark ? "[%02x]" : " %02x", b[i]);
		if (i % 16 == 15 || i + 1 == n)
			print_error("\n");
	}
}

void dvx_test_bytes_equal(const void *got, const void *want, size_t n, const char *what,
			  const char *file, int line)
{
	const uint8_t *g = got, *w = want;
	size_t i;

	for (i = 0; i < n; i++)
		if (g[i] != w[i])
			break;
	if (i == n)
		return;
	print_error("%s: %zu bytes differ first at offset %zu (0x%02x, want 0x%02x)\n", what, n,
		    i, g[i], w[i]);
	dump("got ", g, n, i);
	dump("want", w, n, i);
	_fail(file, line);
}

size_t dvx_test_hex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	int hi = -1;

	for (; *hex; hex++) {
		int v;

		if (isspace((unsigned char)*hex))
			continue;
		if (!isxdigit((unsigned char)*hex))
			continue;
		v = isdigit((unsigned char)*hex) ? *hex - '0' : (tolower((unsigned char)*hex) - 'a' + 10);
		if (hi < 0) {
			hi = v;
		} else {
			if (n < max)
				out[n] = (uint8_t)(hi << 4 | v);
			n++;
			hi = -1;
		}
	}
	return n;
}

void *dvx_test_alloc(size_t bytes, int fill)
{
	size_t n = bytes < 64 ? 64 : (bytes + 63) & ~(size_t)63;
	void *p = aligned_alloc(64, n);

	assert_non_null(p);
	memset(p, fill, n);
	return p;
}

void dvx_test_free(void *p)
{
	free(p);
}
