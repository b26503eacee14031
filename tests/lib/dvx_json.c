// SPDX-License-Identifier: MIT
/*
 * tests/lib/dvx_json.c - recursive-descent JSON syntax checker (no values kept).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "dvx_json.h"

struct jp {
	const char *s;
	size_t i;
	const char *err;
	int depth;
};

static void ws(struct jp *p)
{
	while (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')
		p->i++;
}

static int fail(struct jp *p, const char *why)
{
	if (!p->err)
		p->err = why;
	return 0;
}

static int value(struct jp *p);

static int string(struct jp *p)
{
	if (p->s[p->i] != '"')
		return fail(p, "expected string");
	p->i++;
	for (;;) {
		unsigned char c = (unsigned char)p->s[p->i];

		if (c == '\0')
			return fail(p, "unterminated string");
		if (c < 0x20)
			return fail(p, "control character in string");
		p->i++;
		if (c == '"')
			return 1;
		if (c != '\\')
			continue;
		c = (unsigned char)p->s[p->i++];
		if (c == 'u') {
			int k;

			for (k = 0; k < 4; k++, p->i++)
				if (!isxdigit((unsigned char)p->s[p->i]))
					return fail(p, "bad \\u escape");
		} else if (!strchr("\"\\/bfnrt", c) || c == '\0') {
			return fail(p, "bad escape");
		}
	}
}

static int number(struct jp *p)
{
	size_t start = p->i;

	if (p->s[p->i] == '-')
		p->i++;
	if (p->s[p->i] == '0')
		p->i++;
	else if (isdigit((unsigned char)p->s[p->i]))
		while (isdigit((unsigned char)p->s[p->i]))
			p->i++;
	else
		return fail(p, "bad number");
	if (p->s[p->i] == '.') {
		p->i++;
		if (!isdigit((unsigned char)p->s[p->i]))
			return fail(p, "bad fraction");
		while (isdigit((unsigned char)p->s[p->i]))
			p->i++;
	}
	if (p->s[p->i] == 'e' || p->s[p->i] == 'E') {
		p->i++;
		if (p->s[p->i] == '+' || p->s[p->i] == '-')
			p->i++;
		if (!isdigit((unsigned char)p->s[p->i]))
			return fail(p, "bad exponent");
		while (isdigit((unsigned char)p->s[p->i]))
			p->i++;
	}
	return p->i > start;
}

static int word(struct jp *p, const char *w)
{
	size_t l = strlen(w);

	if (strncmp(p->s + p->i, w, l))
		return fail(p, "bad literal");
	p->i += l;
	return 1;
}

static int container(struct jp *p, char open, char close)
{
	int n = 0;

	if (++p->depth > 64)
		return fail(p, "too deep");
	p->i++;	/* open */
	ws(p);
	if (p->s[p->i] == close) {
		p->i++;
		p->depth--;
		return 1;
	}
	for (;;) {
		ws(p);
		if (open == '{') {
			if (!string(p))
				return 0;
			ws(p);
			if (p->s[p->i] != ':')
				return fail(p, "expected ':'");
			p->i++;
			ws(p);
		}
		if (!value(p))
			return 0;
		n++;
		ws(p);
		if (p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->s[p->i] == close) {
			p->i++;
			p->depth--;
			return n > 0;
		}
		return fail(p, open == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int value(struct jp *p)
{
	ws(p);
	switch (p->s[p->i]) {
	case '{':
		return container(p, '{', '}');
	case '[':
		return container(p, '[', ']');
	case '"':
		return string(p);
	case 't':
		return word(p, "true");
	case 'f':
		return word(p, "false");
	case 'n':
		return word(p, "null");
	default:
		return number(p);
	}
}

int dvx_test_json_check(const char *s, char *why, size_t n)
{
	struct jp p = { s, 0, NULL, 0 };
	int ok = value(&p);

	if (ok) {
		ws(&p);
		if (s[p.i])
			ok = fail(&p, "trailing text");
	}
	if (!ok && why && n)
		snprintf(why, n, "%s at byte %zu", p.err ? p.err : "invalid", p.i);
	return ok;
}
