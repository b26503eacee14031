/* SPDX-License-Identifier: MIT */
/*
 * tests/lib/dvx_json.h - a strict JSON syntax checker for tests of JSON emitters.
 */
#ifndef DVX_TEST_JSON_H
#define DVX_TEST_JSON_H

#include <stddef.h>

/**
 * dvx_test_json_check() - is @s exactly one JSON value (RFC 8259 syntax), with
 * nothing but whitespace around it?
 * @s:		NUL-terminated text
 * @why:	receives a short reason and byte offset on failure (may be NULL)
 * @n:		size of @why
 *
 * Return: 1 when valid, 0 otherwise.
 */
int dvx_test_json_check(const char *s, char *why, size_t n);

#endif
