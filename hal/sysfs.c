// SPDX-License-Identifier: MIT
/*
 * hal/sysfs.c - device facts from sysfs: RDMA devices, their PCI functions and
 * drivers, and the PCI tree (for GPU/NIC distance). The root is a parameter so the
 * tests can run these against a fake tree.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"

/* snprintf for paths: -ENAMETOOLONG instead of a silently truncated path */
static int pathf(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pathf(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	int l;

	va_start(ap, fmt);
	l = vsnprintf(out, n, fmt, ap);
	va_end(ap);
	if (l < 0 || (size_t)l >= n) {
		out[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = strlen(src);

	if (l >= n)
		l = n - 1;
	memcpy(dst, src, l);
	dst[l] = '\0';
}

int dvx_sysfs_read_str(const char *path, char *buf, size_t n)
{
	FILE *f;
	size_t l;
	int err = 0;

	if (!path || !buf || !n)
		return -EINVAL;
	buf[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)(n > INT_MAX ? INT_MAX : n), f)) {
		err = ferror(f) ? -EIO : 0;
		buf[0] = '\0';
	}
	fclose(f);
	l = strlen(buf);
	while (l && (buf[l - 1] == '\n' || buf[l - 1] == '\r'))
		buf[--l] = '\0';
	return err;
}

int dvx_sysfs_read_u64(const char *path, uint64_t *val)
{
	char buf[64], *end;
	unsigned long long v;
	const char *p;
	int neg, err;

	err = dvx_sysfs_read_str(path, buf, sizeof(buf));
	if (err)
		return err;
	p = buf;
	while (isspace((unsigned char)*p))
		p++;
	neg = *p == '-';
	if (neg)
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	v = strtoull(p, &end, 0);
	if (errno || (*end && !isspace((unsigned char)*end)))
		return -EINVAL;
	*val = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* parse exactly @n hex digits at *p; advance *p */
static int hexn(const char **p, unsigned n, unsigned *v)
{
	unsigned i;

	*v = 0;
	for (i = 0; i < n; i++) {
		int h = hexval((unsigned char)(*p)[i]);

		if (h < 0)
			return -1;
		*v = *v << 4 | (unsigned)h;
	}
	*p += n;
	return 0;
}

int dvx_sysfs_pci_normalize(const char *in, char out[DVX_HAL_PCI_MAX])
{
	unsigned dom = 0, bus, slot, fn;
	const char *p = in;
	size_t l;

	if (!in || !out)
		return -EINVAL;
	l = strlen(in);
	if (l == 12) {
		if (hexn(&p, 4, &dom) || *p++ != ':')
			return -EINVAL;
	} else if (l != 7) {
		return -EINVAL;
	}
	if (hexn(&p, 2, &bus) || *p++ != ':' || hexn(&p, 2, &slot) || *p++ != '.' ||
	    hexn(&p, 1, &fn) || *p)
		return -EINVAL;
	if (slot > 0x1f || fn > 7)
		return -EINVAL;
	snprintf(out, DVX_HAL_PCI_MAX, "%04x:%02x:%02x.%x", dom, bus, slot, fn);
	return 0;
}

static int is_pci_addr(const char *s)
{
	char tmp[DVX_HAL_PCI_MAX];

	return strlen(s) == 12 && dvx_sysfs_pci_normalize(s, tmp) == 0;
}

/* basename of the target of symlink @path, into @out */
static int link_base(const char *path, char *out, size_t n)
{
	char buf[PATH_MAX];
	ssize_t l;
	const char *b;

	l = readlink(path, buf, sizeof(buf) - 1);
	if (l < 0)
		return -errno;
	buf[l] = '\0';
	b = strrchr(buf, '/');
	copy_str(out, n, b ? b + 1 : buf);
	return 0;
}

static int32_t read_numa(const char *dir)
{
	char path[PATH_MAX];
	uint64_t v;

	pathf(path, sizeof(path), "%s/numa_node", dir);
	if (dvx_sysfs_read_u64(path, &v))
		return -1;
	return (int32_t)v < 0 ? -1 : (int32_t)v;
}

static uint32_t read_u32_or0(const char *dir, const char *attr)
{
	char path[PATH_MAX];
	uint64_t v;

	pathf(path, sizeof(path), "%s/%s", dir, attr);
	return dvx_sysfs_read_u64(path, &v) ? 0 : (uint32_t)v;
}

/* "7cfe:9003:0012:3456" -> CPU-order 64-bit value */
static uint64_t parse_guid(const char *s)
{
	uint64_t v = 0;
	unsigned digits = 0;

	for (; *s; s++) {
		int h;

		if (*s == ':')
			continue;
		h = hexval((unsigned char)*s);
		if (h < 0 || ++digits > 16)
			return 0;
		v = v << 4 | (unsigned)h;
	}
	return v;
}

static int numeric_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static int not_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* the network interface of port 1: the RoCE GID table's netdev, else the PCI
 * function's netdev with dev_port 0 (the first port), else its first netdev */
static void find_netdev(const char *ibdev_dir, const char *pci_dir, char *out, size_t n)
{
	char path[PATH_MAX], buf[64];
	struct dirent **ents = NULL;
	int i, cnt;

	pathf(path, sizeof(path), "%s/ports/1/gid_attrs/ndevs/0", ibdev_dir);
	if (dvx_sysfs_read_str(path, buf, sizeof(buf)) == 0 && buf[0]) {
		copy_str(out, n, buf);
		return;
	}
	if (!pci_dir[0])
		return;
	pathf(path, sizeof(path), "%s/net", pci_dir);
	cnt = scandir(path, &ents, not_dot, alphasort);
	if (cnt <= 0)
		return;
	for (i = 0; i < cnt; i++) {
		uint64_t port;
		char attr[PATH_MAX];

		pathf(attr, sizeof(attr), "%s/%s/dev_port", path, ents[i]->d_name);
		if (dvx_sysfs_read_u64(attr, &port) == 0 && port == 0) {
			copy_str(out, n, ents[i]->d_name);
			break;
		}
	}
	if (!out[0])
		copy_str(out, n, ents[0]->d_name);
	for (i = 0; i < cnt; i++)
		free(ents[i]);
	free(ents);
}

static int mlx5_driver(const char *drv)
{
	/* the PCI driver, or one of the auxiliary drivers of the mlx5 stack
	 * ("mlx5_core.sf" for sub-functions, "mlx5_ib.rdma") */
	return strcmp(drv, "mlx5_core") == 0 || strncmp(drv, "mlx5_core.", 10) == 0 ||
	       strncmp(drv, "mlx5_ib.", 8) == 0;
}

int dvx_sysfs_ib_dev_info(const char *ibdev_dir, const char *name,
			  struct dvx_hal_nic_info *info)
{
	char path[PATH_MAX], real[PATH_MAX], pci_dir[PATH_MAX], buf[64];
	struct dirent **ents = NULL;
	int i, cnt;

	if (!ibdev_dir || !name || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	copy_str(info->name, sizeof(info->name), name);
	info->numa_node = -1;
	if (access(ibdev_dir, F_OK))
		return -errno;

	pci_dir[0] = '\0';
	pathf(path, sizeof(path), "%s/device", ibdev_dir);
	if (realpath(path, real)) {
		char *end = real + strlen(real);

		/* driver of the device itself (PCI function or auxiliary device) */
		pathf(path, sizeof(path), "%s/driver", real);
		link_base(path, info->driver, sizeof(info->driver));
		/* walk up to the PCI function */
		while (end > real) {
			char *slash = end;

			while (slash > real && *slash != '/')
				slash--;
			if (*slash == '/' && is_pci_addr(slash + 1)) {
				copy_str(info->pci, sizeof(info->pci), slash + 1);
				memcpy(pci_dir, real, (size_t)(end - real));
				pci_dir[end - real] = '\0';
				break;
			}
			*slash = '\0';
			end = slash;
		}
	}
	if (pci_dir[0]) {
		info->vendor_id = read_u32_or0(pci_dir, "vendor");
		info->device_id = read_u32_or0(pci_dir, "device");
		info->numa_node = read_numa(pci_dir);
		if (!info->driver[0]) {
			pathf(path, sizeof(path), "%s/driver", pci_dir);
			link_base(path, info->driver, sizeof(info->driver));
		}
	}

	pathf(path, sizeof(path), "%s/node_guid", ibdev_dir);
	if (dvx_sysfs_read_str(path, buf, sizeof(buf)) == 0)
		info->node_guid = parse_guid(buf);

	pathf(path, sizeof(path), "%s/ports", ibdev_dir);
	cnt = scandir(path, &ents, not_dot, alphasort);
	if (cnt > 0) {
		for (i = 0; i < cnt; i++) {
			if (numeric_name(ents[i]->d_name) && info->nports < 255)
				info->nports++;
			free(ents[i]);
		}
		free(ents);
	}

	find_netdev(ibdev_dir, pci_dir, info->netdev, sizeof(info->netdev));

	if (info->driver[0])
		info->is_mlx5 = (uint8_t)mlx5_driver(info->driver);
	else
		info->is_mlx5 = info->vendor_id == DVX_PCI_VENDOR_MELLANOX;
	return 0;
}

int dvx_sysfs_ib_list(const char *root, struct dvx_hal_nic_info *info, unsigned max,
		      unsigned *count)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct dirent **ents = NULL;
	int i, cnt, err = 0;
	unsigned n = 0;

	if (!root || !count || (max && !info))
		return -EINVAL;
	*count = 0;
	if (pathf(path, sizeof(path), "%s/class/infiniband", root))
		return -ENAMETOOLONG;
	cnt = scandir(path, &ents, not_dot, alphasort);
	if (cnt < 0)
		return errno == ENOENT ? 0 : -errno;
	for (i = 0; i < cnt; i++) {
		if (n < max) {
			pathf(dir, sizeof(dir), "%s/%s", path, ents[i]->d_name);
			err = dvx_sysfs_ib_dev_info(dir, ents[i]->d_name, &info[n]);
			if (err)
				break;
		}
		n++;
	}
	for (i = 0; i < cnt; i++)
		free(ents[i]);
	free(ents);
	if (err)
		return err;
	*count = n;
	return 0;
}

int dvx_sysfs_pci_list(const char *root, uint32_t class_mask, uint32_t class_value,
		       struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count)
{
	char path[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];
	struct dirent **ents = NULL;
	int i, cnt;
	unsigned n = 0;

	if (!root || !count || (max && !devs))
		return -EINVAL;
	*count = 0;
	if (pathf(path, sizeof(path), "%s/bus/pci/devices", root))
		return -ENAMETOOLONG;
	cnt = scandir(path, &ents, not_dot, alphasort);
	if (cnt < 0)
		return errno == ENOENT ? 0 : -errno;
	for (i = 0; i < cnt; i++) {
		struct dvx_hal_pci_dev *d;
		uint32_t cls;

		pathf(dir, sizeof(dir), "%s/%s", path, ents[i]->d_name);
		cls = read_u32_or0(dir, "class");
		if (!is_pci_addr(ents[i]->d_name) || (cls & class_mask) != class_value)
			continue;
		if (n < max) {
			d = &devs[n];
			memset(d, 0, sizeof(*d));
			dvx_sysfs_pci_normalize(ents[i]->d_name, d->pci);
			d->vendor_id = read_u32_or0(dir, "vendor");
			d->device_id = read_u32_or0(dir, "device");
			d->class_code = cls;
			d->numa_node = read_numa(dir);
			if (realpath(dir, real))
				copy_str(d->path, sizeof(d->path), real);
		}
		n++;
	}
	for (i = 0; i < cnt; i++)
		free(ents[i]);
	free(ents);
	*count = n;
	return 0;
}
