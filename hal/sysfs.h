/* SPDX-License-Identifier: MIT */
/*
 * hal/sysfs.h - private to hal/: reading device facts out of sysfs.
 *
 * Every helper takes the sysfs root as a parameter ("/sys" on a running system,
 * DVX_SYSFS_ROOT) so the unit tests can point it at a fake tree built in a
 * temporary directory. Nothing here talks to rdma-core: the linux backend combines
 * these facts with what libibverbs reports.
 */
#ifndef DVX_HAL_SYSFS_H
#define DVX_HAL_SYSFS_H

#include <dvx/hal.h>

#define DVX_SYSFS_ROOT "/sys"

/* PCI vendor ids the hal knows by number. */
#define DVX_PCI_VENDOR_MELLANOX 0x15b3u
#define DVX_PCI_VENDOR_NVIDIA 0x10deu

/**
 * dvx_sysfs_read_str() - read the first line of a sysfs attribute.
 * @path:	file to read
 * @buf:	receives the line without its newline, NUL-terminated
 * @n:		size of @buf (at least 1)
 *
 * Return: 0, or a negative errno (-ENOENT when the attribute does not exist).
 */
int dvx_sysfs_read_str(const char *path, char *buf, size_t n);

/**
 * dvx_sysfs_read_u64() - read a sysfs attribute holding one number.
 * @path:	file to read ("0x15b3", "1", "-1" are all accepted; base from the prefix)
 * @val:	receives the value (a negative number comes back two's-complement)
 *
 * Return: 0, -ENOENT or -EINVAL when the content is not a number.
 */
int dvx_sysfs_read_u64(const char *path, uint64_t *val);

/**
 * dvx_sysfs_pci_normalize() - accept "dddd:bb:dd.f" or "bb:dd.f" and write the
 * canonical lower-case "dddd:bb:dd.f" form.
 * @in:		the address as the user wrote it
 * @out:	receives the canonical address (DVX_HAL_PCI_MAX bytes)
 *
 * Return: 0, or -EINVAL when @in is not a PCI address.
 */
int dvx_sysfs_pci_normalize(const char *in, char out[DVX_HAL_PCI_MAX]);

/**
 * dvx_sysfs_ib_dev_info() - identify an RDMA device from sysfs.
 * @ibdev_dir:	the device's sysfs directory ("<root>/class/infiniband/mlx5_0", which
 *		is also what rdma-core keeps in struct ibv_device.ibdev_path)
 * @name:	the ibdev name, copied into @info->name
 * @info:	filled: pci, driver, netdev, numa_node, vendor_id, device_id, node_guid,
 *		nports, is_mlx5; fields sysfs does not know stay empty/0 (numa_node -1)
 *
 * The PCI function is the last component of the realpath of @ibdev_dir/device that
 * looks like a PCI address (a sub-function's auxiliary device resolves to its parent
 * PCI function). is_mlx5 is decided by the kernel driver bound to the device
 * ("mlx5_core", or an auxiliary "mlx5_core.*" driver), never by the device's name;
 * where sysfs hides the driver link, by the PCI vendor id 0x15b3.
 *
 * Return: 0, or -ENOENT when @ibdev_dir does not exist.
 */
int dvx_sysfs_ib_dev_info(const char *ibdev_dir, const char *name,
			  struct dvx_hal_nic_info *info);

/**
 * dvx_sysfs_ib_list() - list RDMA devices from <root>/class/infiniband, by name.
 * @root:	sysfs root
 * @info:	array of @max entries, filled in name order
 * @max:	its size
 * @count:	receives the number of devices present (may exceed @max)
 *
 * Return: 0 (no RDMA subsystem means zero devices), or a negative errno.
 */
int dvx_sysfs_ib_list(const char *root, struct dvx_hal_nic_info *info, unsigned max,
		      unsigned *count);

/**
 * dvx_sysfs_pci_list() - list PCI functions from <root>/bus/pci/devices.
 * @root:	sysfs root
 * @class_mask:	PCI class bits to compare (0 lists everything)
 * @class_value: wanted value of (class & @class_mask)
 * @devs:	array of @max entries, filled in address order
 * @max:	its size
 * @count:	receives the number of matching functions (may exceed @max)
 *
 * Each entry's path is the realpath of the function's sysfs directory, whose
 * components are the bridges from the root complex down: two functions are the
 * nearer the longer the common prefix of their paths.
 *
 * Return: 0 (no PCI bus in sysfs means zero functions), or a negative errno.
 */
int dvx_sysfs_pci_list(const char *root, uint32_t class_mask, uint32_t class_value,
		       struct dvx_hal_pci_dev *devs, unsigned max, unsigned *count);

#endif /* DVX_HAL_SYSFS_H */
