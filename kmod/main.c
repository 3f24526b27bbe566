// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpup2p.ko — /dev/gpup2p: pin GPU memory with the NVIDIA driver's nvidia_p2p_* API and map it
 * into the calling process. This file: the device, the ioctls, isolation, counters. Pins and
 * mappings are in pin.c; the interface in uapi/gpup2p_ioctl.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "gpup2p_internal.h"

struct gp_counters gp_stats;

static int gp_open(struct inode *inode, struct file *file)
{
	struct gp_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	INIT_LIST_HEAD(&f->pins);
	f->tgid = current->tgid;
	f->mapping = inode->i_mapping;
	file->private_data = f;
	return 0;
}

static int gp_release(struct inode *inode, struct file *file)
{
	struct gp_file *f = file->private_data;

	gp_pin_release_all(f);
	kfree(f);
	return 0;
}

/* Only the process that opened the device may use it: not a forked child, not a process the file
 * descriptor was passed to. */
static int owner_only(const struct gp_file *f)
{
	if (current->tgid == f->tgid)
		return 0;
	pr_err_ratelimited("process %d used a descriptor opened by process %d: refused\n",
			   current->tgid, f->tgid);
	return -EACCES;
}

/* Copy a request in, checking its size field and flags word against what the ioctl number says. */
static int get_req(void *req, size_t size, unsigned long arg)
{
	u32 head[2];

	if (copy_from_user(head, (void __user *)arg, sizeof(head)))
		return -EFAULT;
	if (head[0] != size)
		return -EINVAL;
	if (copy_from_user(req, (void __user *)arg, size))
		return -EFAULT;
	return 0;
}

static long do_version(unsigned long arg)
{
	struct gpup2p_version v;
	int rc = get_req(&v, sizeof(v), arg);

	if (rc)
		return rc;
	if (v.flags)
		return -EINVAL;
	v.abi_major = GPUP2P_ABI_MAJOR;
	v.abi_minor = GPUP2P_ABI_MINOR;
	v.min_user_major = 1;
	v.min_user_minor = 0;
	if (copy_to_user((void __user *)arg, &v, sizeof(v)))
		return -EFAULT;
	/* a caller of another major ABI gets the driver's numbers, then the refusal */
	return v.user_major == GPUP2P_ABI_MAJOR ? 0 : -EPROTO;
}

static long gp_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct gp_file *f = file->private_data;
	int rc = owner_only(f);

	if (rc)
		return rc;
	switch (cmd) {
	case GPUP2P_IOC_VERSION:
		return do_version(arg);
	case GPUP2P_IOC_PIN: {
		struct gpup2p_pin req;

		if ((rc = get_req(&req, sizeof(req), arg)))
			return rc;
		if ((rc = gp_pin_create(f, &req)))
			return rc;
		if (copy_to_user((void __user *)arg, &req, sizeof(req))) {
			gp_pin_remove(f, req.handle);
			return -EFAULT;
		}
		return 0;
	}
	case GPUP2P_IOC_UNPIN: {
		struct gpup2p_unpin req;

		if ((rc = get_req(&req, sizeof(req), arg)))
			return rc;
		return req.flags ? -EINVAL : gp_pin_remove(f, req.handle);
	}
	case GPUP2P_IOC_INFO: {
		struct gpup2p_info req;

		if ((rc = get_req(&req, sizeof(req), arg)))
			return rc;
		if (req.flags)
			return -EINVAL;
		if ((rc = gp_pin_info(f, &req)))
			return rc;
		return copy_to_user((void __user *)arg, &req, sizeof(req)) ? -EFAULT : 0;
	}
	}
	return -ENOTTY;
}

static int gp_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct gp_file *f = file->private_data;
	int rc = owner_only(f);

	if (rc)
		return rc;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL; /* a private copy of device memory makes no sense */
	return gp_pin_mmap(f, vma);
}

static const struct file_operations gp_fops = {
	.owner = THIS_MODULE,
	.open = gp_open,
	.release = gp_release,
	.unlocked_ioctl = gp_ioctl,
	.compat_ioctl = gp_ioctl,
	.mmap = gp_mmap,
	.llseek = noop_llseek,
};

#define COUNTER(name) \
static ssize_t name##_show(struct device *d, struct device_attribute *a, char *buf) \
{ \
	return sysfs_emit(buf, "%lld\n", (long long)atomic64_read(&gp_stats.name)); \
} \
static DEVICE_ATTR_RO(name)

COUNTER(pins);
COUNTER(bytes_pinned);
COUNTER(invalidations);
COUNTER(maps);
COUNTER(pin_failures);

static ssize_t abi_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d.%d\n", GPUP2P_ABI_MAJOR, GPUP2P_ABI_MINOR);
}
static DEVICE_ATTR_RO(abi);

/* 1 when GPUP2P_PIN_PERSISTENT can work (the driver has a persistent-pin entry point), else 0 */
static ssize_t persistent_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", gp_pin_persistent_supported());
}
static DEVICE_ATTR_RO(persistent);

static struct attribute *gp_attrs[] = {
	&dev_attr_pins.attr, &dev_attr_bytes_pinned.attr, &dev_attr_invalidations.attr,
	&dev_attr_maps.attr, &dev_attr_pin_failures.attr, &dev_attr_abi.attr,
	&dev_attr_persistent.attr, NULL,
};
ATTRIBUTE_GROUPS(gp);

static struct miscdevice gp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "gpup2p",
	.fops = &gp_fops,
	.groups = gp_groups,
	.mode = 0660,
};

static int __init gp_init(void)
{
	int rc = misc_register(&gp_misc);

	if (rc)
		pr_err("cannot register /dev/gpup2p: %d\n", rc);
	else
		pr_info("/dev/gpup2p ready (ABI %d.%d)\n", GPUP2P_ABI_MAJOR, GPUP2P_ABI_MINOR);
	return rc;
}

static void __exit gp_exit(void)
{
	/* open files hold the module, so no pin can remain; say so loudly if one does, never BUG */
	if (atomic64_read(&gp_stats.pins))
		pr_err("unloading with %lld pins outstanding\n",
		       (long long)atomic64_read(&gp_stats.pins));
	misc_deregister(&gp_misc);
}

module_init(gp_init);
module_exit(gp_exit);
MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("gpup2p: pin GPU memory through nvidia_p2p_* and map it to user space");
MODULE_VERSION("0.1.0");
