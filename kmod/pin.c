// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpup2p.ko — pins: nvidia_p2p_get_pages, the free callback, unpin, and mapping BAR pages into user
 * space. Locking: gp_file.lock guards the list of pins; gp_pin.lock guards a pin's state and page
 * table and is never held across a call into the NVIDIA driver, which calls the free callback with its
 * own locks held (the callback takes only gp_pin.lock, and never calls put_pages).
 */
#include <linux/ktime.h>
#include <linux/slab.h>

#include "gpup2p_internal.h"

static atomic64_t next_id = ATOMIC64_INIT(0);

u32 gp_map_type(void)
{
#if defined(CONFIG_X86)
	return GPUP2P_MAP_WC;
#else
	return GPUP2P_MAP_UC;
#endif
}

static u32 page_bytes(const struct nvidia_p2p_page_table *pt)
{
	switch (pt->page_size) {
	case NVIDIA_P2P_PAGE_SIZE_4KB: return 4u << 10;
	case NVIDIA_P2P_PAGE_SIZE_64KB: return 64u << 10;
	case NVIDIA_P2P_PAGE_SIZE_128KB: return 128u << 10;
	}
	return 0;
}

static void pin_free(struct kref *ref)
{
	struct gp_pin *p = container_of(ref, struct gp_pin, ref);

	kfree(p);
}

static void zap(struct gp_pin *p)
{
	unmap_mapping_range(p->mapping, (loff_t)p->id << GPUP2P_PIN_SHIFT, p->len, 1);
}

/* Called by the NVIDIA driver when the pinned memory is freed (cudaFree, process exit). */
static void gp_free_callback(void *data)
{
	struct gp_pin *p = data;
	struct nvidia_p2p_page_table *pt = NULL;

	mutex_lock(&p->lock);
	if (p->state == GP_VALID) {
		p->state = GP_INVALID;
		pt = p->pt;
		p->pt = NULL;
	}
	mutex_unlock(&p->lock);
	if (!pt)
		return; /* an unpin is under way: its put_pages does the rest */
	zap(p);
	nvidia_p2p_free_page_table(pt);
	atomic64_inc(&gp_stats.invalidations);
	atomic64_dec(&gp_stats.pins);
	atomic64_sub(p->len, &gp_stats.bytes_pinned);
	pr_info("gpup2p: pin %llu (va 0x%llx, %llu bytes) invalidated: the GPU memory was freed\n",
		p->id, p->va, p->len);
}

int gp_pin_create(struct gp_file *f, struct gpup2p_pin *req)
{
	struct gp_pin *p;
	ktime_t t0;
	int rc;

	if (req->flags & ~GPUP2P_PIN_FLAGS)
		return -EINVAL;
	if (!req->len || req->len > GPUP2P_PIN_MAX || (req->va | req->len) & GPUP2P_ALIGN_MASK)
		return -EINVAL;
	if (req->va + req->len < req->va)
		return -EOVERFLOW;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	kref_init(&p->ref);
	mutex_init(&p->lock);
	atomic_set(&p->nmaps, 0);
	p->mapping = f->mapping;
	p->va = req->va;
	p->len = req->len;
	p->flags = req->flags;
	p->id = (u64)atomic64_inc_return(&next_id);
	if (p->id >= (1ULL << (63 - GPUP2P_PIN_SHIFT))) {
		kfree(p);
		return -ENOSPC;
	}
	t0 = ktime_get();
	rc = nvidia_p2p_get_pages(0, 0, p->va, p->len, &p->pt,
				  (req->flags & GPUP2P_PIN_PERSISTENT) ? NULL : gp_free_callback, p);
	p->pin_ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	if (rc) {
		atomic64_inc(&gp_stats.pin_failures);
		pr_err_ratelimited("gpup2p: nvidia_p2p_get_pages(va 0x%llx, %llu bytes) failed: %d%s\n", p->va, p->len,
				   rc, rc == -EINVAL ? " (not GPU memory of this process, or a GPU that refuses pinning)" :
				   rc == -ENOMEM ? " (BAR1 space exhausted?)" : "");
		kfree(p);
		return rc;
	}
	p->page_size = page_bytes(p->pt);
	p->npages = p->pt->entries;
	if (!p->page_size || !p->npages || (u64)p->npages * p->page_size < p->len) {
		pr_err("gpup2p: page table of va 0x%llx unusable (page size %u, %u entries)\n", p->va, p->pt->page_size,
		       p->pt->entries);
		nvidia_p2p_put_pages(0, 0, p->va, p->pt);
		kfree(p);
		return -EIO;
	}
	p->nruns = 1;
	for (u32 i = 1; i < p->npages; i++)
		if (p->pt->pages[i]->physical_address != p->pt->pages[i - 1]->physical_address + p->page_size)
			p->nruns++;
	p->state = GP_VALID;
	mutex_lock(&f->lock);
	list_add_tail(&p->node, &f->pins);
	mutex_unlock(&f->lock);
	atomic64_inc(&gp_stats.pins);
	atomic64_add(p->len, &gp_stats.bytes_pinned);
	req->handle = p->id;
	return 0;
}

/* Find a pin of the file: with take, remove it from the list (the list's reference passes to the
 * caller); else take a new reference. */
static struct gp_pin *lookup(struct gp_file *f, u64 id, int take)
{
	struct gp_pin *p, *found = NULL;

	mutex_lock(&f->lock);
	list_for_each_entry(p, &f->pins, node)
		if (p->id == id) {
			if (take)
				list_del(&p->node);
			else
				kref_get(&p->ref);
			found = p;
			break;
		}
	mutex_unlock(&f->lock);
	return found;
}

/* Unpin a pin already taken off its file's list (the list's reference is dropped here). */
static void unpin(struct gp_pin *p)
{
	struct nvidia_p2p_page_table *pt;
	enum gp_state was;

	mutex_lock(&p->lock);
	was = p->state;
	pt = p->pt;
	p->state = GP_UNPINNED;
	mutex_unlock(&p->lock);
	zap(p);
	if (was == GP_VALID) {
		int rc = nvidia_p2p_put_pages(0, 0, p->va, pt);

		if (rc)
			pr_err("gpup2p: nvidia_p2p_put_pages(va 0x%llx) failed: %d\n", p->va, rc);
		atomic64_dec(&gp_stats.pins);
		atomic64_sub(p->len, &gp_stats.bytes_pinned);
	}
	kref_put(&p->ref, pin_free);
}

int gp_pin_remove(struct gp_file *f, u64 handle)
{
	struct gp_pin *p = lookup(f, handle, 1);

	if (!p)
		return -ENOENT;
	unpin(p);
	return 0;
}

void gp_pin_release_all(struct gp_file *f)
{
	struct gp_pin *p, *n;
	LIST_HEAD(all);

	mutex_lock(&f->lock);
	list_splice_init(&f->pins, &all);
	mutex_unlock(&f->lock);
	list_for_each_entry_safe(p, n, &all, node) {
		list_del(&p->node);
		unpin(p);
	}
}

int gp_pin_info(struct gp_file *f, struct gpup2p_info *info)
{
	struct gp_pin *p = lookup(f, info->handle, 0);

	if (!p)
		return -ENOENT;
	mutex_lock(&p->lock);
	info->va = p->va;
	info->len = p->len;
	info->mmap_offset = p->id << GPUP2P_PIN_SHIFT;
	info->pin_ns = p->pin_ns;
	info->page_size = p->page_size;
	info->npages = p->npages;
	info->nruns = p->nruns;
	info->map_type = gp_map_type();
	info->state = p->state == GP_VALID ? GPUP2P_STATE_VALID : GPUP2P_STATE_INVALIDATED;
	info->nmaps = (u32)atomic_read(&p->nmaps);
	info->pin_flags = p->flags;
	mutex_unlock(&p->lock);
	kref_put(&p->ref, pin_free);
	return 0;
}

static void vma_open(struct vm_area_struct *vma)
{
	struct gp_pin *p = vma->vm_private_data;

	kref_get(&p->ref);
	atomic_inc(&p->nmaps);
	atomic64_inc(&gp_stats.maps);
}

static void vma_close(struct vm_area_struct *vma)
{
	struct gp_pin *p = vma->vm_private_data;

	atomic_dec(&p->nmaps);
	atomic64_dec(&gp_stats.maps);
	kref_put(&p->ref, pin_free);
}

/* Every page was mapped at mmap time: a fault means the pin is gone (freed or unpinned). */
static vm_fault_t vma_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct gp_vm_ops = {
	.open = vma_open,
	.close = vma_close,
	.fault = vma_fault,
};

/* Map [off, off + size) of the pin at vma->vm_start, merging physically contiguous pages. */
static int map_range(struct gp_pin *p, struct vm_area_struct *vma, u64 off, u64 size)
{
	unsigned long addr = vma->vm_start;

	while (size) {
		u64 pg = off / p->page_size, in = off % p->page_size;
		phys_addr_t phys = p->pt->pages[pg]->physical_address + in;
		u64 run = p->page_size - in;
		int rc;

		while (run < size && pg + 1 < p->npages &&
		       p->pt->pages[pg + 1]->physical_address == p->pt->pages[pg]->physical_address + p->page_size) {
			pg++;
			run += p->page_size;
		}
		if (run > size)
			run = size;
		rc = io_remap_pfn_range(vma, addr, phys >> PAGE_SHIFT, run, vma->vm_page_prot);
		if (rc)
			return rc;
		addr += run;
		off += run;
		size -= run;
	}
	return 0;
}

int gp_pin_mmap(struct gp_file *f, struct vm_area_struct *vma)
{
	u64 id = vma->vm_pgoff >> (GPUP2P_PIN_SHIFT - PAGE_SHIFT);
	u64 off = (u64)(vma->vm_pgoff & ((1UL << (GPUP2P_PIN_SHIFT - PAGE_SHIFT)) - 1)) << PAGE_SHIFT;
	u64 size = vma->vm_end - vma->vm_start;
	struct gp_pin *p = lookup(f, id, 0);
	int rc;

	if (!p)
		return -ENOENT;
	if (off >= p->len || size > p->len - off) {
		kref_put(&p->ref, pin_free);
		return -EINVAL;
	}
	gp_vma_set_flags(vma);
	vma->vm_page_prot = gp_map_type() == GPUP2P_MAP_WC ? pgprot_writecombine(vma->vm_page_prot)
							   : pgprot_noncached(vma->vm_page_prot);
	mutex_lock(&p->lock);
	rc = p->state == GP_VALID ? map_range(p, vma, off, size) : -ENOENT;
	mutex_unlock(&p->lock);
	if (rc) {
		kref_put(&p->ref, pin_free);
		return rc;
	}
	/* the reference taken by lookup() now belongs to the VMA */
	vma->vm_private_data = p;
	vma->vm_ops = &gp_vm_ops;
	atomic_inc(&p->nmaps);
	atomic64_inc(&gp_stats.maps);
	return 0;
}
