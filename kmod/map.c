// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpup2p.ko — mapping pinned GPU memory into user space.
 *
 * mmap only checks the request and sets the VMA up; a page is mapped when it is first touched
 * (vma_fault, under the pin's lock). Mapping pages in the mmap handler would race with the free
 * callback: the kernel links a new VMA into the process, and into the device's address_space
 * through which the callback zaps, only after the handler has returned. A callback in between
 * would find nothing to zap and leave the process mapping GPU memory the driver has freed and
 * may hand to someone else. Now a fault after the callback (or after an unpin) finds the pin no
 * longer valid and gets VM_FAULT_SIGBUS; a fault before it inserted its page into a linked VMA,
 * which the callback's zap then clears. Either way, once the GPU memory is freed every access to
 * a mapping of it gets SIGBUS, never the old pages.
 *
 * Write-combining: vmf_insert_pfn_prot takes a page's cache mode from the kernel's PAT memtype
 * list (x86), not from the VMA, and a page found in no range there is mapped uncached. Each
 * physically contiguous run of a pin is reserved write-combined while the pin holds its pages
 * (arch_io_reserve_memtype_wc, as TTM does for VRAM apertures); where that is refused the pin is
 * mapped uncached and GPUP2P_IOC_INFO says so.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io.h>
#include <linux/mm.h>

#include "gpup2p_internal.h"

/*
 * arm64: pgprot_noncached is Device-nGnRnE memory, where an unaligned access (a memcpy's tail)
 * faults; pgprot_writecombine is Normal non-cacheable, which takes them, as a BAR mapping needs.
 * arch_io_reserve_memtype_wc is a no-op there (no PAT).
 */
u32 gp_map_type(void)
{
#if defined(CONFIG_X86) || defined(CONFIG_ARM64)
	return GPUP2P_MAP_WC;
#else
	return GPUP2P_MAP_UC;
#endif
}

/* The end of the physically contiguous run of pages of pt that starts at page i. */
static u32 run_end(const struct gp_pin *p, const struct nvidia_p2p_page_table *pt, u32 i)
{
	u32 j = i + 1;

	while (j < p->npages && pt->pages[j]->physical_address ==
	       pt->pages[j - 1]->physical_address + p->page_size)
		j++;
	return j;
}

/* Give back the write-combining reservations of the runs of pt before page upto. */
static void free_runs(const struct gp_pin *p, const struct nvidia_p2p_page_table *pt, u32 upto)
{
	u32 i, j;

	for (i = 0; i < upto; i = j) {
		j = run_end(p, pt, i);
		arch_io_free_memtype_wc(pt->pages[i]->physical_address,
					(u64)(j - i) * p->page_size);
	}
}

void gp_map_reserve(struct gp_pin *p)
{
	const struct nvidia_p2p_page_table *pt = p->pt;
	u32 i, j;
	int rc = 0;

	p->map_type = gp_map_type();
	p->wc_reserved = false;
	if (p->map_type != GPUP2P_MAP_WC)
		return;
	for (i = 0; i < p->npages; i = j) {
		j = run_end(p, pt, i);
		rc = arch_io_reserve_memtype_wc(pt->pages[i]->physical_address,
						(u64)(j - i) * p->page_size);
		if (rc)
			break;
	}
	if (!rc) {
		p->wc_reserved = true;
		return;
	}
	free_runs(p, pt, i);
	p->map_type = GPUP2P_MAP_UC;
	pr_warn_ratelimited("pin %llu (va 0x%llx): write-combining refused (%d), mapped uncached\n",
			    p->id, p->va, rc);
}

void gp_map_release(struct gp_pin *p, const struct nvidia_p2p_page_table *pt)
{
	if (p->wc_reserved)
		free_runs(p, pt, p->npages);
	p->wc_reserved = false;
}

/* The offset in its pin of the file page pgoff (an mmap offset is the pin id << 40 + offset). */
static u64 pin_offset(unsigned long pgoff)
{
	const unsigned int shift = GPUP2P_PIN_SHIFT - PAGE_SHIFT;

	return (u64)(pgoff & ((1UL << shift) - 1)) << PAGE_SHIFT;
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
	gp_pin_put(p);
}

/* Under the pin's lock, the pin valid: map the page at offset off of the pin at addr. */
static vm_fault_t insert(const struct gp_pin *p, struct vm_area_struct *vma, unsigned long addr,
			 u64 off)
{
	phys_addr_t phys = p->pt->pages[off / p->page_size]->physical_address + off % p->page_size;

	return vmf_insert_pfn_prot(vma, addr, phys >> PAGE_SHIFT, vma->vm_page_prot);
}

/* First touch of a page: map it, and the rest of its GPU page that this VMA covers (one fault per
 * GPU page, not per 4 KiB). SIGBUS once the pin is invalidated or unpinned. */
static vm_fault_t vma_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct gp_pin *p = vma->vm_private_data;
	u64 off = pin_offset(vmf->pgoff), first, o;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	mutex_lock(&p->lock);
	if (p->state != GP_VALID || off >= p->len)
		goto out;
	ret = insert(p, vma, vmf->address, off);
	first = off - off % p->page_size;
	for (o = first; ret == VM_FAULT_NOPAGE && o < first + p->page_size && o < p->len;
	     o += PAGE_SIZE) {
		/* may wrap below 0: then it is past vm_end too */
		unsigned long addr = vmf->address - (unsigned long)off + (unsigned long)o;

		if (o != off && addr >= vma->vm_start && addr < vma->vm_end)
			insert(p, vma, addr, o);
	}
out:
	mutex_unlock(&p->lock);
	return ret;
}

static const struct vm_operations_struct gp_vm_ops = {
	.open = vma_open,
	.close = vma_close,
	.fault = vma_fault,
};

/* Check the request and set the VMA up; no page is mapped here (see the top of this file). */
int gp_pin_mmap(struct gp_file *f, struct vm_area_struct *vma)
{
	u64 id = vma->vm_pgoff >> (GPUP2P_PIN_SHIFT - PAGE_SHIFT);
	u64 off = pin_offset(vma->vm_pgoff);
	u64 size = vma->vm_end - vma->vm_start;
	struct gp_pin *p = gp_pin_lookup(f, id, 0);
	bool valid;
	u32 type;

	if (!p)
		return -ENOENT;
	if (off >= p->len || size > p->len - off) {
		gp_pin_put(p);
		return -EINVAL;
	}
	mutex_lock(&p->lock);
	valid = p->state == GP_VALID;
	type = p->map_type;
	mutex_unlock(&p->lock);
	if (!valid) {
		gp_pin_put(p);
		return -ENOENT;
	}
	gp_vma_set_flags(vma);
	if (type == GPUP2P_MAP_WC)
		vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	else
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	/* the reference taken by gp_pin_lookup() now belongs to the VMA */
	vma->vm_private_data = p;
	vma->vm_ops = &gp_vm_ops;
	atomic_inc(&p->nmaps);
	atomic64_inc(&gp_stats.maps);
	return 0;
}
