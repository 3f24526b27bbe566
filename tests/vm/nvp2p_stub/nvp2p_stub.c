// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Test only (never installed): the NVIDIA driver's nvidia_p2p_* functions over the BAR2 of an
 * ivshmem-plain device (QEMU), so that gpup2p.ko can be exercised in a guest without a GPU. The host
 * sees the bytes written through a mapping in the ivshmem memory backend file.
 * /dev/nvp2p_stub "allocates" ranges of a fake GPU address space (bump allocator over the BAR) and
 * "frees" them, which calls the free callbacks the way the NVIDIA driver does.
 */
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "nvp2p_stub.h"

#define PG (64ULL << 10)

struct nvidia_p2p_page {
	u64 physical_address;
	u32 registers[6];
};

struct nvidia_p2p_page_table {
	u32 version;
	u32 page_size;
	struct nvidia_p2p_page **pages;
	u32 entries;
	u8 *gpu_uuid;
};

struct alloc {
	struct list_head node;
	u64 va, len, bar_off;
	u32 flags;
	int freed;
};

struct reg {
	struct list_head node;
	struct nvidia_p2p_page_table *pt;
	void (*cb)(void *);
	void *data;
	u64 va, len;
	int fired;
};

static DEFINE_MUTEX(lock);
static LIST_HEAD(allocs);
static LIST_HEAD(regs);
static struct pci_dev *ivshmem;
static resource_size_t bar_start, bar_len, bar_next;
static u8 fake_uuid[16] = { 0x67, 0x70, 0x75, 0x32, 0x70, 0x32, 0x70 };

static struct alloc *find_alloc(u64 va, u64 len)
{
	struct alloc *a;

	list_for_each_entry(a, &allocs, node)
		if (!a->freed && va >= a->va && va + len <= a->va + a->len && va + len > va)
			return a;
	return NULL;
}

static void free_pt(struct nvidia_p2p_page_table *pt)
{
	for (u32 i = 0; i < pt->entries; i++)
		kfree(pt->pages[i]);
	kfree(pt->pages);
	kfree(pt);
}

int nvidia_p2p_get_pages(u64 token, u32 va_space, u64 va, u64 len, struct nvidia_p2p_page_table **out,
			 void (*cb)(void *), void *data)
{
	struct nvidia_p2p_page_table *pt;
	struct alloc *a;
	struct reg *r;
	u32 n;

	if (!len || (va | len) & (PG - 1) || !out)
		return -EINVAL;
	mutex_lock(&lock);
	a = find_alloc(va, len);
	if (!a) {
		mutex_unlock(&lock);
		return -EINVAL;
	}
	if (a->flags & NVP2P_STUB_NOMEM) {
		mutex_unlock(&lock);
		return -ENOMEM;
	}
	n = (u32)(len / PG);
	pt = kzalloc(sizeof(*pt), GFP_KERNEL);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (pt)
		pt->pages = kcalloc(n, sizeof(*pt->pages), GFP_KERNEL);
	if (!pt || !r || !pt->pages) {
		mutex_unlock(&lock);
		if (pt)
			kfree(pt->pages);
		kfree(pt);
		kfree(r);
		return -ENOMEM;
	}
	pt->version = 0x00010002;
	pt->page_size = 1; /* 64 KiB */
	pt->gpu_uuid = fake_uuid;
	for (u32 i = 0; i < n; i++) {
		u64 page = (va - a->va) / PG + i, npg = a->len / PG;

		pt->pages[i] = kzalloc(sizeof(*pt->pages[i]), GFP_KERNEL);
		if (!pt->pages[i]) {
			pt->entries = i;
			free_pt(pt);
			kfree(r);
			mutex_unlock(&lock);
			return -ENOMEM;
		}
		if (a->flags & NVP2P_STUB_SCATTER)
			page = npg - 1 - page;
		pt->pages[i]->physical_address = bar_start + a->bar_off + page * PG;
	}
	pt->entries = n;
	r->pt = pt;
	r->cb = cb;
	r->data = data;
	r->va = va;
	r->len = len;
	list_add_tail(&r->node, &regs);
	mutex_unlock(&lock);
	*out = pt;
	return 0;
}
EXPORT_SYMBOL(nvidia_p2p_get_pages);

static struct reg *take(struct nvidia_p2p_page_table *pt)
{
	struct reg *r;

	list_for_each_entry(r, &regs, node)
		if (r->pt == pt) {
			list_del(&r->node);
			return r;
		}
	return NULL;
}

int nvidia_p2p_put_pages(u64 token, u32 va_space, u64 va, struct nvidia_p2p_page_table *pt)
{
	struct reg *r;

	mutex_lock(&lock);
	r = take(pt);
	mutex_unlock(&lock);
	if (!r || r->va != va)
		return -EINVAL;
	if (r->fired)
		pr_err("nvp2p_stub: put_pages after the free callback of va 0x%llx\n", va);
	free_pt(pt);
	kfree(r);
	return 0;
}
EXPORT_SYMBOL(nvidia_p2p_put_pages);

int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *pt)
{
	struct reg *r;

	mutex_lock(&lock);
	r = take(pt);
	mutex_unlock(&lock);
	if (!r)
		return -EINVAL;
	free_pt(pt);
	kfree(r);
	return 0;
}
EXPORT_SYMBOL(nvidia_p2p_free_page_table);

/* Free an allocation: call every callback of a page table inside it (not under our lock: the client
 * calls nvidia_p2p_free_page_table from its callback). */
static long do_free(u64 va)
{
	struct alloc *a;
	struct reg *r;
	int found = 0;

	mutex_lock(&lock);
	a = find_alloc(va, PG);
	if (a && a->va == va) {
		a->freed = 1;
		found = 1;
	}
	mutex_unlock(&lock);
	if (!found)
		return -EINVAL;
	for (;;) {
		void (*cb)(void *) = NULL;
		void *data = NULL;

		mutex_lock(&lock);
		list_for_each_entry(r, &regs, node)
			if (!r->fired && r->cb && r->va >= a->va && r->va < a->va + a->len) {
				r->fired = 1;
				cb = r->cb;
				data = r->data;
				break;
			}
		mutex_unlock(&lock);
		if (!cb)
			break;
		cb(data);
	}
	return 0;
}

static long stub_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case NVP2P_STUB_ALLOC: {
		struct nvp2p_stub_alloc req;
		struct alloc *a;
		u64 len;

		if (copy_from_user(&req, (void __user *)arg, sizeof(req)))
			return -EFAULT;
		len = (req.len + PG - 1) & ~(PG - 1);
		if (!len || len > bar_len)
			return -EINVAL;
		a = kzalloc(sizeof(*a), GFP_KERNEL);
		if (!a)
			return -ENOMEM;
		mutex_lock(&lock);
		if (bar_next + len > bar_len) {
			mutex_unlock(&lock);
			kfree(a);
			return -ENOSPC;
		}
		a->va = NVP2P_STUB_VA_BASE + bar_next;
		a->bar_off = bar_next;
		a->len = len;
		a->flags = req.flags;
		bar_next += len;
		list_add_tail(&a->node, &allocs);
		mutex_unlock(&lock);
		req.va = a->va;
		req.bar_off = a->bar_off;
		return copy_to_user((void __user *)arg, &req, sizeof(req)) ? -EFAULT : 0;
	}
	case NVP2P_STUB_FREE: {
		u64 va;

		if (copy_from_user(&va, (void __user *)arg, sizeof(va)))
			return -EFAULT;
		return do_free(va);
	}
	case NVP2P_STUB_LIVE: {
		struct reg *r;
		u64 n = 0;

		mutex_lock(&lock);
		list_for_each_entry(r, &regs, node)
			n++;
		mutex_unlock(&lock);
		return copy_to_user((void __user *)arg, &n, sizeof(n)) ? -EFAULT : 0;
	}
	}
	return -ENOTTY;
}

static const struct file_operations stub_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = stub_ioctl,
};

static struct miscdevice stub_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "nvp2p_stub",
	.fops = &stub_fops,
	.mode = 0600,
};

static int __init stub_init(void)
{
	int rc;

	ivshmem = pci_get_device(0x1af4, 0x1110, NULL);
	if (!ivshmem) {
		pr_err("nvp2p_stub: no ivshmem device (1af4:1110)\n");
		return -ENODEV;
	}
	rc = pci_enable_device_mem(ivshmem);
	if (rc) {
		pci_dev_put(ivshmem);
		return rc;
	}
	bar_start = pci_resource_start(ivshmem, 2);
	bar_len = pci_resource_len(ivshmem, 2);
	rc = misc_register(&stub_misc);
	if (rc) {
		pci_disable_device(ivshmem);
		pci_dev_put(ivshmem);
		return rc;
	}
	pr_info("nvp2p_stub: %s BAR2 %pa + %pa as fake GPU memory\n", pci_name(ivshmem), &bar_start, &bar_len);
	return 0;
}

static void __exit stub_exit(void)
{
	struct alloc *a, *an;
	struct reg *r, *rn;

	misc_deregister(&stub_misc);
	list_for_each_entry_safe(r, rn, &regs, node) {
		pr_err("nvp2p_stub: page table of va 0x%llx never given back\n", r->va);
		list_del(&r->node);
		free_pt(r->pt);
		kfree(r);
	}
	list_for_each_entry_safe(a, an, &allocs, node) {
		list_del(&a->node);
		kfree(a);
	}
	pci_disable_device(ivshmem);
	pci_dev_put(ivshmem);
}

module_init(stub_init);
module_exit(stub_exit);
MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("gpup2p tests: nvidia_p2p_* over an ivshmem BAR (never install)");
