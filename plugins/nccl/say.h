/* SPDX-License-Identifier: MIT */
/*
 * plugins/nccl/say.h - the plugin's one way of saying why: a formatted reason into the
 * caller's buffer (NULL or empty: nothing), for the WARN line the caller writes.
 */
#ifndef DVX_PLUGINS_NCCL_SAY_H
#define DVX_PLUGINS_NCCL_SAY_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline void dvxn_say(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void dvxn_say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

#endif /* DVX_PLUGINS_NCCL_SAY_H */
