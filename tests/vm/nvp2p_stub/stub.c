// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Test only (never installed): the NVIDIA driver's nvidia_p2p_* functions over the BAR2 of an
 * ivshmem-plain device (QEMU), so that gpup2p.ko can be exercised in a guest without a GPU. The
 * host sees the bytes written through a mapping in the ivshmem memory backend file.
 * /dev/nvp2p_stub "allocates" ranges of a fake GPU address space (bump allocator over the BAR) and
 * "frees" them, which calls the free callbacks the way the NVIDIA driver does.
 *
 * It refuses what the NVIDIA driver (open kernel module, nv-p2p.c) refuses, so that code the real
 * driver would reject cannot pass here: addresses and lengths not multiples of 64 KiB, a NULL free
 * callback (-EINVAL; before 535 a NULL callback asked for persistent pages, see the flavours),
 * put_pages on a persistent table and put_pages_persistent on another. Pages are always 64 KiB.
 * After a free callback returns, the driver frees the page table itself: a later put_pages gets
 * -EINVAL, and put_pages waits for a callback in flight. Flavours (make NVP2P_STUB_API=...):
 *   persistent (default)  driver 535+: nvidia_p2p_get_pages_persistent/put_pages_persistent
 *   nullcb                driver 515-530: nvidia_p2p_cap_persistent_pages, NULL callback asks
 *                         for persistent pages
 *   none                  older drivers: no persistent pages at all
 * NVP2P_STUB_FREE_IN_MMAP frees a range between a client's mmap handler and the kernel linking the
 * new mapping (mmap_race.c: a kretprobe on the handler holds its caller until the callbacks
 * have returned).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "internal.h"
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
	u32 flags;
};

struct alloc {
	struct list_head node;
	u64 va, len, bar_off;
	u32 flags;
	int freed;
	void *ram;      /* NVP2P_STUB_COHERENT: its pages */
};

enum reg_state { LIVE, FIRING, DEAD };

/* One page table handed out. DEAD ones (the driver freed them after the free callback) stay, with
 * their contents poisoned, until the stub is unloaded: a client that uses one is caught. */
struct reg {
	struct list_head node;
	struct nvidia_p2p_page_table *pt;
	void (*cb)(void *);
	void *data;
	u64 va, len;
	bool persistent;
	enum reg_state state;
	struct completion done;       /* the free callback returned */
	struct work_struct fire_work; /* NVP2P_STUB_FREE_IN_GET */
};

static DEFINE_MUTEX(lock);
static DEFINE_MUTEX(race_lock); /* arming and disarming NVP2P_STUB_FREE_IN_MMAP */
static DECLARE_WAIT_QUEUE_HEAD(fired_wq);
static LIST_HEAD(allocs);
static LIST_HEAD(regs);
static LIST_HEAD(dead);
static struct workqueue_struct *fire_wq;
static struct nvp2p_stub_stats stats;
static struct pci_dev *ivshmem;
static resource_size_t bar_start, bar_len, bar_next;
static resource_size_t ram_next;
static u8 fake_uuid[16] = { 0x67, 0x70, 0x75, 0x32, 0x70, 0x32, 0x70 };

static struct alloc *find_alloc(u64 va, u64 len)
{
	struct alloc *a;

	list_for_each_entry(a, &allocs, node)
		if (!a->freed && va >= a->va && va + len <= a->va + a->len && va + len > va)
			return a;
	return NULL;
}

static void free_pages_of(struct nvidia_p2p_page_table *pt)
{
	for (u32 i = 0; i < pt->entries; i++)
		kfree(pt->pages[i]);
	kfree(pt->pages);
	pt->pages = NULL;
	pt->entries = 0;
}

static void free_reg(struct reg *r)
{
	free_pages_of(r->pt);
	kfree(r->pt);
	kfree(r);
}

/* Under lock: a handed-out table (live, firing or dead), or NULL. */
static struct reg *find_reg(struct nvidia_p2p_page_table *pt)
{
	struct reg *r;

	list_for_each_entry(r, &regs, node)
		if (r->pt == pt)
			return r;
	list_for_each_entry(r, &dead, node)
		if (r->pt == pt)
			return r;
	return NULL;
}

static int bad_call(const char *what, u64 va)
{
	stats.bad_calls++;
	pr_err("%s (va 0x%llx): the NVIDIA driver refuses this\n", what, va);
	return -EINVAL;
}

/* Call r's free callback (r is FIRING), then free the table as the NVIDIA driver does. */
static void fire(struct reg *r)
{
	r->cb(r->data);
	mutex_lock(&lock);
	free_pages_of(r->pt);
	r->pt->version = 0;
	r->pt->page_size = 0xdead;  /* a client reading the freed table sees nonsense */
	r->state = DEAD;
	list_move_tail(&r->node, &dead);
	stats.callbacks++;
	mutex_unlock(&lock);
	complete_all(&r->done);
	wake_up_all(&fired_wq);
}

static void fire_work(struct work_struct *w)
{
	fire(container_of(w, struct reg, fire_work));
}

static int get_pages(u64 va, u64 len, struct nvidia_p2p_page_table **out, void (*cb)(void *),
		     void *data)
{
	struct nvidia_p2p_page_table *pt = NULL;
	struct alloc *a;
	struct reg *r = NULL;
	int rc = -ENOMEM;
	u32 n;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!len || (va | len) & (PG - 1))
		return -EINVAL;
	mutex_lock(&lock);
	a = find_alloc(va, len);
	if (!a || (a->flags & NVP2P_STUB_NOMEM)) {
		mutex_unlock(&lock);
		return a ? -ENOMEM : -EINVAL;
	}
	n = (u32)(len / PG);
	pt = kzalloc(sizeof(*pt), GFP_KERNEL);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!pt || !r)
		goto fail;
	r->pt = pt;
	pt->pages = kcalloc(n, sizeof(*pt->pages), GFP_KERNEL);
	if (!pt->pages)
		goto fail;
	pt->version = a->flags & NVP2P_STUB_TABLE_V2 ? 0x00020000 : 0x00010002;
	if ((a->flags & NVP2P_STUB_TABLE_V2) && a->ram)
		pt->flags = 1; /* NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE */
	pt->page_size = 1; /* NVIDIA_P2P_PAGE_SIZE_64KB: the driver always pins 64 KiB pages */
	pt->gpu_uuid = fake_uuid;
	for (u32 i = 0; i < n; i++) {
		u64 page = (va - a->va) / PG + i, npg = a->len / PG;

		pt->pages[i] = kzalloc(sizeof(*pt->pages[i]), GFP_KERNEL);
		if (!pt->pages[i])
			goto fail;
		pt->entries = i + 1;
		if (a->flags & NVP2P_STUB_SCATTER)
			page = npg - 1 - page;
		pt->pages[i]->physical_address = (a->ram ? 0 : bar_start) + a->bar_off + page * PG;
	}
	r->cb = cb;
	r->data = data;
	r->va = va;
	r->len = len;
	r->persistent = !cb;
	r->state = LIVE;
	init_completion(&r->done);
	INIT_WORK(&r->fire_work, fire_work);
	list_add_tail(&r->node, &regs);
	*out = pt;
	if (cb && (a->flags & NVP2P_STUB_FREE_IN_GET)) {
		/* freed on another thread right after the callback was registered */
		a->freed = 1;
		r->state = FIRING;
		queue_work(fire_wq, &r->fire_work);
		mutex_unlock(&lock);
		wait_for_completion_timeout(&r->done, msecs_to_jiffies(NVP2P_STUB_RACE_MS));
		return 0;
	}
	mutex_unlock(&lock);
	return 0;
fail:
	mutex_unlock(&lock);
	if (r)
		free_reg(r);
	else
		kfree(pt);
	return rc;
}

int nvidia_p2p_get_pages(u64 token, u32 va_space, u64 va, u64 len,
			 struct nvidia_p2p_page_table **out, void (*cb)(void *), void *data)
{
#ifndef NVP2P_STUB_API_NULLCB
	if (!cb)
		return bad_call("nvidia_p2p_get_pages with a NULL free callback", va);
#endif
	return get_pages(va, len, out, cb, data);
}
EXPORT_SYMBOL(nvidia_p2p_get_pages);

/* Give back a table: wait for a free callback in flight; after one, the table is gone. */
static int put(u64 va, struct nvidia_p2p_page_table *pt, bool persistent)
{
	struct reg *r;
	int rc = 0;

	if (!pt)
		return 0;
	mutex_lock(&lock);
	r = find_reg(pt);
	while (r && r->state == FIRING) {
		mutex_unlock(&lock);
		wait_event(fired_wq, READ_ONCE(r->state) != FIRING);
		mutex_lock(&lock);
	}
	if (r && r->state == DEAD) {
		stats.put_after_free++;
		pr_err("put_pages after the free callback of va 0x%llx\n", va);
		rc = -EINVAL;
	} else if (!r) {
		rc = bad_call("put of an unknown page table", va);
	} else if (r->va != va) {
		rc = bad_call("put with another virtual address", va);
#ifndef NVP2P_STUB_API_NULLCB /* there, nvidia_p2p_put_pages gives back persistent tables too */
	} else if (r->persistent != persistent) {
		rc = bad_call(persistent ? "put_pages_persistent of a table with a free callback" :
			      "put_pages of a persistent table", va);
#endif
	}
	if (rc) {
		mutex_unlock(&lock);
		return rc;
	}
	list_del(&r->node);
	mutex_unlock(&lock);
	free_reg(r);
	return 0;
}

int nvidia_p2p_put_pages(u64 token, u32 va_space, u64 va, struct nvidia_p2p_page_table *pt)
{
	return put(va, pt, false);
}
EXPORT_SYMBOL(nvidia_p2p_put_pages);

/* A no-op in the NVIDIA driver: it frees the table itself once the free callback returns. */
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *pt)
{
	return 0;
}
EXPORT_SYMBOL(nvidia_p2p_free_page_table);

#if defined(NVP2P_STUB_API_NULLCB)
int nvidia_p2p_cap_persistent_pages = 1;
EXPORT_SYMBOL(nvidia_p2p_cap_persistent_pages);
#elif !defined(NVP2P_STUB_API_NONE)
int nvidia_p2p_get_pages_persistent(u64 va, u64 len, struct nvidia_p2p_page_table **out, u32 flags)
{
	if (flags > 1) /* NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING is the only flag */
		return bad_call("nvidia_p2p_get_pages_persistent with unknown flags", va);
	return get_pages(va, len, out, NULL, NULL);
}
EXPORT_SYMBOL(nvidia_p2p_get_pages_persistent);

int nvidia_p2p_put_pages_persistent(u64 va, struct nvidia_p2p_page_table *pt, u32 flags)
{
	if (flags)
		return -EINVAL;
	return put(va, pt, true);
}
EXPORT_SYMBOL(nvidia_p2p_put_pages_persistent);
#endif

/* Free an allocation: call the free callback of every non-persistent table inside it (not under our
 * lock), as the NVIDIA driver does on cudaFree. */
long stub_free(u64 va)
{
	struct alloc *a;
	struct reg *r, *found;

	mutex_lock(&lock);
	a = find_alloc(va, PG);
	if (a && a->va == va)
		a->freed = 1;
	mutex_unlock(&lock);
	if (!a || a->va != va)
		return -EINVAL;
	do {
		found = NULL;
		mutex_lock(&lock);
		list_for_each_entry(r, &regs, node)
			if (r->state == LIVE && !r->persistent && r->va >= a->va &&
			    r->va < a->va + a->len) {
				r->state = FIRING;
				found = r;
				break;
			}
		mutex_unlock(&lock);
		if (found)
			fire(found);
	} while (found);
	return 0;
}

static long do_alloc(struct nvp2p_stub_alloc *req)
{
	u64 len = (req->len + PG - 1) & ~(PG - 1);
	bool ram = req->flags & NVP2P_STUB_COHERENT;
	struct alloc *a;

	if (!len || len > bar_len)
		return -EINVAL;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (a && ram)
		a->ram = alloc_pages_exact(len, GFP_KERNEL | __GFP_ZERO);
	if (!a || (ram && !a->ram)) {
		kfree(a);
		return -ENOMEM;
	}
	mutex_lock(&lock);
	if (!ram && bar_next + len > bar_len) {
		mutex_unlock(&lock);
		kfree(a);
		return -ENOSPC;
	}
	/* RAM ranges get "GPU virtual addresses" of their own, 16 GiB up */
	a->va = NVP2P_STUB_VA_BASE + (ram ? (1ULL << 34) + ram_next : bar_next);
	a->bar_off = ram ? virt_to_phys(a->ram) : bar_next;
	a->len = len;
	a->flags = req->flags;
	*(ram ? &ram_next : &bar_next) += len;
	list_add_tail(&a->node, &allocs);
	mutex_unlock(&lock);
	req->va = a->va;
	req->bar_off = a->bar_off;
	return 0;
}

static long stub_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct nvp2p_stub_stats st;
	struct reg *r;

	switch (cmd) {
	case NVP2P_STUB_ALLOC: {
		struct nvp2p_stub_alloc req;
		long rc;

		if (copy_from_user(&req, uarg, sizeof(req)))
			return -EFAULT;
		rc = do_alloc(&req);
		if (rc)
			return rc;
		return copy_to_user(uarg, &req, sizeof(req)) ? -EFAULT : 0;
	}
	case NVP2P_STUB_FREE: {
		u64 va;

		if (copy_from_user(&va, uarg, sizeof(va)))
			return -EFAULT;
		return stub_free(va);
	}
	case NVP2P_STUB_FREE_IN_MMAP: {
		struct nvp2p_stub_free_in_mmap req;
		long rc;

		if (copy_from_user(&req, uarg, sizeof(req)))
			return -EFAULT;
		mutex_lock(&race_lock);
		rc = mmap_race_arm(&req);
		mutex_unlock(&race_lock);
		return rc;
	}
	case NVP2P_STUB_MMAP_FIRED: {
		s64 fired;

		mutex_lock(&race_lock);
		fired = mmap_race_disarm();
		mutex_unlock(&race_lock);
		return copy_to_user(uarg, &fired, sizeof(fired)) ? -EFAULT : 0;
	}
	case NVP2P_STUB_LIVE:
	case NVP2P_STUB_STATS:
		mutex_lock(&lock);
		st = stats;
		st.live = 0;
		list_for_each_entry(r, &regs, node)
			st.live++;
		mutex_unlock(&lock);
		if (cmd == NVP2P_STUB_LIVE)
			return copy_to_user(uarg, &st.live, sizeof(st.live)) ? -EFAULT : 0;
		return copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
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
		pr_err("no ivshmem device (1af4:1110)\n");
		return -ENODEV;
	}
	rc = pci_enable_device_mem(ivshmem);
	if (rc)
		goto put_dev;
	bar_start = pci_resource_start(ivshmem, 2);
	bar_len = pci_resource_len(ivshmem, 2);
	rc = -ENOMEM;
	fire_wq = alloc_workqueue("nvp2p_stub", WQ_UNBOUND, 0);
	if (!fire_wq)
		goto disable;
	rc = misc_register(&stub_misc);
	if (rc)
		goto destroy_wq;
	pr_info("%s BAR2 %pa + %pa as fake GPU memory\n", pci_name(ivshmem), &bar_start, &bar_len);
	return 0;
destroy_wq:
	destroy_workqueue(fire_wq);
disable:
	pci_disable_device(ivshmem);
put_dev:
	pci_dev_put(ivshmem);
	return rc;
}

static void __exit stub_exit(void)
{
	struct alloc *a, *an;
	struct reg *r, *rn;

	misc_deregister(&stub_misc);
	mmap_race_disarm();
	destroy_workqueue(fire_wq);
	list_for_each_entry_safe(r, rn, &regs, node) {
		pr_err("page table of va 0x%llx never given back\n", r->va);
		list_del(&r->node);
		free_reg(r);
	}
	list_for_each_entry_safe(r, rn, &dead, node) {
		list_del(&r->node);
		free_reg(r);
	}
	list_for_each_entry_safe(a, an, &allocs, node) {
		list_del(&a->node);
		if (a->ram)
			free_pages_exact(a->ram, a->len);
		kfree(a);
	}
	pci_disable_device(ivshmem);
	pci_dev_put(ivshmem);
}

module_init(stub_init);
module_exit(stub_exit);
MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("gpup2p tests: nvidia_p2p_* over an ivshmem BAR (never install)");
