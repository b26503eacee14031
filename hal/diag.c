// SPDX-License-Identifier: MIT
/*
 * hal/diag.c - vendor codes translated once: DEVX command status, diag records, log.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <dvx/hal.h>
#include <dvx/byteorder.h>

/*
 * DEVX/PRM command status -> errno. The statuses are the PRM's command delivery
 * statuses; the errno choices follow the Linux mlx5 core's translation so that an
 * application sees what the kernel driver would report for the same failure.
 */
static const struct {
	uint8_t status;
	int err;
	const char *name;
} devx_status[] = {
	{ 0x00, 0, "OK" },
	{ 0x01, -EIO, "INTERNAL_ERR" },
	{ 0x02, -EINVAL, "BAD_OP" },
	{ 0x03, -EINVAL, "BAD_PARAM" },
	{ 0x04, -EIO, "BAD_SYS_STATE" },
	{ 0x05, -EINVAL, "BAD_RESOURCE" },
	{ 0x06, -EBUSY, "RESOURCE_BUSY" },
	{ 0x07, -EAGAIN, "NOT_READY" },
	{ 0x08, -ENOMEM, "EXCEED_LIM" },
	{ 0x09, -EINVAL, "BAD_RES_STATE" },
	{ 0x0a, -EINVAL, "BAD_INDEX" },
	{ 0x0f, -EAGAIN, "NO_RESOURCES" },
	{ 0x10, -EINVAL, "BAD_QP_STATE" },
	{ 0x30, -EINVAL, "BAD_PKT" },
	{ 0x40, -EINVAL, "BAD_SIZE_OUTS_CQES" },
	{ 0x50, -EIO, "BAD_INPUT_LEN" },
	{ 0x51, -EIO, "BAD_OUTPUT_LEN" },
};

int dvx_hal_devx_status_errno(uint8_t status)
{
	size_t i;

	for (i = 0; i < DVX_ARRAY_SIZE(devx_status); i++)
		if (devx_status[i].status == status)
			return devx_status[i].err;
	return -EIO;
}

const char *dvx_hal_devx_status_name(uint8_t status)
{
	size_t i;

	for (i = 0; i < DVX_ARRAY_SIZE(devx_status); i++)
		if (devx_status[i].status == status)
			return devx_status[i].name;
	return "UNKNOWN";
}

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
		err = dvx_hal_devx_status_errno(status);
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
	snprintf(diag->msg, sizeof(diag->msg), "command 0x%03x: status 0x%02x (%s) syndrome 0x%08x",
		 opcode, status, dvx_hal_devx_status_name(status), syndrome);
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
