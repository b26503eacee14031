// SPDX-License-Identifier: MIT
/*
 * tools/hexparse.c - hex dumps and numbers from people: strict, with messages that
 * say where the input went wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hexparse.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
	       c == ',' || c == '|';
}

/* "line L, column C: <what> '<token>'" */
static int fail(char *err, size_t errlen, size_t line, size_t col, const char *what,
		const char *tok, size_t toklen)
{
	if (err && errlen)
		snprintf(err, errlen, "line %zu, column %zu: %s '%.*s%s'", line, col, what,
			 (int)(toklen > 40 ? 40 : toklen), tok, toklen > 40 ? "..." : "");
	return -EINVAL;
}

int dvx_hexparse(const char *text, size_t n, uint8_t *out, size_t max, size_t *nout,
		 char *err, size_t errlen)
{
	size_t i = 0, count = 0, line = 1, line_start = 0;
	uint64_t base = 0;
	int have_label = 0;

	*nout = 0;
	if (err && errlen)
		err[0] = '\0';
	while (i < n) {
		const char *tok, *d;
		size_t start, len, dlen, col, k;

		if (text[i] == '\n') {
			line++;
			line_start = ++i;
			continue;
		}
		if (is_sep(text[i])) {
			i++;
			continue;
		}
		if (text[i] == '#') {
			while (i < n && text[i] != '\n')
				i++;
			continue;
		}
		start = i;
		while (i < n && !is_sep(text[i]) && text[i] != '#')
			i++;
		tok = text + start;
		len = i - start;
		col = start - line_start + 1;

		d = tok;
		dlen = len;
		if (dlen && d[dlen - 1] == ':')
			dlen--;
		if (dlen >= 2 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) {
			d += 2;
			dlen -= 2;
		}
		if (!dlen)
			return fail(err, errlen, line, col, "no hex digits in", tok, len);
		for (k = 0; k < dlen; k++)
			if (hexval(d[k]) < 0)
				return fail(err, errlen, line, col, "not hex:", tok, len);

		if (tok[len - 1] == ':') {
			uint64_t v = 0;

			if (dlen > 16)
				return fail(err, errlen, line, col, "offset label too long:", tok,
					    len);
			for (k = 0; k < dlen; k++)
				v = v << 4 | (uint64_t)hexval(d[k]);
			if (!have_label) {
				base = v - count;
				have_label = 1;
			} else if (v != base + count) {
				char what[96];

				snprintf(what, sizeof(what), "offset label is not the byte "
					 "count 0x%llx (a line missing or repeated?):",
					 (unsigned long long)(base + count));
				return fail(err, errlen, line, col, what, tok, len);
			}
			continue;
		}
		if (dlen & 1)
			return fail(err, errlen, line, col, "odd number of hex digits in", tok,
				    len);
		for (k = 0; k < dlen; k += 2) {
			if (count >= max) {
				if (err && errlen)
					snprintf(err, errlen, "line %zu, column %zu: more than %zu "
						 "bytes", line, col, max);
				return -E2BIG;
			}
			out[count++] = (uint8_t)(hexval(d[k]) << 4 | hexval(d[k + 1]));
			*nout = count;
		}
	}
	return 0;
}

int dvx_parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	unsigned base = 10;
	int any = 0, big = 0;

	if (!s)
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; *s; s++) {
		int h = hexval(*s);

		if (h < 0 || (unsigned)h >= base)
			return -EINVAL;
		/* past 64 bits: -ERANGE, but only once the rest is seen to be digits */
		if (x > (UINT64_MAX - (uint64_t)h) / base)
			big = 1;
		x = x * base + (uint64_t)h;
		any = 1;
	}
	if (!any)
		return -EINVAL;
	if (big || x > max)
		return -ERANGE;
	*v = x;
	return 0;
}
