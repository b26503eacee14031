// SPDX-License-Identifier: MIT
/*
 * hal/diag.c - diagnostic records (the vendor's own words, kept for the caller) and the
 * log callback.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <dvx/hal.h>
#include <dvx/byteorder.h>

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = src ? strlen(src) : 0;

	if (l >= n)
		l = n - 1;
	if (l)
		memcpy(dst, src, l);
	dst[l] = '\0';
}

int dvx_hal_diag_set(struct dvx_diag *diag, int err, enum dvx_diag_src src, const char *op,
		     const char *fmt, ...)
{
	va_list ap;

	if (!diag)
		return err;
	memset(diag, 0, sizeof(*diag));
	diag->err = err;
	diag->src = (uint16_t)src;
	copy_str(diag->op, sizeof(diag->op), op);
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
		va_end(ap);
	}
	return err;
}

int dvx_hal_diag_devx(struct dvx_diag *diag, const char *op, const void *in, const void *out,
		      int sys_errno)
{
	uint16_t opcode = in ? dvx_get_be16(in) : 0;
	uint8_t status = out ? *(const uint8_t *)out : 0;
	uint32_t syndrome = out ? dvx_get_be32((const uint8_t *)out + 4) : 0;
	int err;

	if (status)
		err = -EREMOTEIO;	/* refused: the status's errno is mlx5's to say */
	else if (sys_errno > 0)
		err = -sys_errno;
	else
		err = -EIO;
	if (!diag)
		return err;
	memset(diag, 0, sizeof(*diag));
	diag->err = err;
	diag->src = DVX_DIAG_DEVX;
	diag->cmd_opcode = opcode;
	diag->status = status;
	diag->syndrome = syndrome;
	diag->sys_errno = sys_errno;
	copy_str(diag->op, sizeof(diag->op), op);
	snprintf(diag->msg, sizeof(diag->msg), "command 0x%03x: status 0x%02x syndrome 0x%08x",
		 opcode, status, syndrome);
	return err;
}

void dvx_hal_log(const struct dvx_log *log, int level, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	if (!log || !log->fn || level > log->level)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log->fn(log->arg, level, buf);
}
