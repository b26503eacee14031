/* SPDX-License-Identifier: MIT */
/*
 * tools/hexparse.h - reading hex dumps and numbers typed by people (dvx-wqe).
 */
#ifndef DVX_TOOLS_HEXPARSE_H
#define DVX_TOOLS_HEXPARSE_H

#include <stddef.h>
#include <stdint.h>

/**
 * dvx_hexparse() - turn a hex dump into bytes.
 * @text:	the dump (need not be NUL-terminated)
 * @n:		its length
 * @out:	where the bytes go
 * @max:	room in @out
 * @nout:	bytes produced (also on error: the bytes before the bad token)
 * @err:	on failure, a message naming the line, column and token
 * @errlen:	size of @err
 *
 * Syntax: tokens separated by whitespace, ',' or '|'; '#' starts a comment that runs
 * to the end of the line. A token is an even number of hex digits, optionally after
 * "0x" ("08", "0x00000508", "00000508": bytes in the order written), or an offset
 * label ending in ':' ("10:", "0040:", "0x40:"). The first label may have any value
 * (a dump cut from the middle of a ring); every later label must equal the first plus
 * the bytes read since, so a missing or repeated line is caught.
 *
 * Return: 0; -EINVAL for a malformed token (odd digit count, a non-hex character,
 * "0x" alone, a label that does not match the byte count); -E2BIG when the dump has
 * more than @max bytes.
 */
int dvx_hexparse(const char *text, size_t n, uint8_t *out, size_t max, size_t *nout,
		 char *err, size_t errlen);

/**
 * dvx_parse_u64() - a whole number typed on a command line.
 * @s:		decimal, or hex with a "0x" prefix; nothing else around it
 * @max:	largest accepted value
 * @v:		the value
 *
 * Return: 0; -EINVAL when @s is not a number; -ERANGE when it exceeds @max.
 */
int dvx_parse_u64(const char *s, uint64_t max, uint64_t *v);

#endif /* DVX_TOOLS_HEXPARSE_H */
