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
 * mapped uncached and GPUP2P_IOC_INFO says so. The reservation also succeeds where an earlier one
 * of another type overlaps the run (a UC- mmap of the BAR's sysfs resource file, say), and the
 * pages then get that type; without PAT (a CPU without it, or nopat) WC is UC- in the page table.
 * What each run really got is read back (run_is_wc) and a pin with any run not write-combined
 * says uncached.
 *
 * Coherent GPU memory (Grace Hopper's, onlined as System RAM: the NVIDIA driver's page table 2.0
 * flags it CPU-cacheable) is mapped write-back, as the kernel's own mapping of that RAM is (any
 * other type would alias it); no reservation is made for it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/mm.h>

#if defined(CONFIG_X86)
#include <asm/memtype.h>
#endif

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

/* Where the runs of pt lie: all in System RAM (coherent GPU memory), none (BAR pages), or both. */
enum gp_ram { GP_RAM_NONE, GP_RAM_ALL, GP_RAM_MIXED };

static enum gp_ram in_ram(const struct gp_pin *p, const struct nvidia_p2p_page_table *pt)
{
	unsigned int seen = 0;    /* bit 0: a run in RAM, bit 1: a run outside it */
	u32 i, j;
	int r;

	for (i = 0; i < p->npages; i = j) {
		j = run_end(p, pt, i);
		r = region_intersects(pt->pages[i]->physical_address,
				      (size_t)(j - i) * p->page_size, IORESOURCE_SYSTEM_RAM,
				      IORES_DESC_NONE);
		seen |= r == REGION_INTERSECTS ? 1 : r == REGION_DISJOINT ? 2 : 3;
	}
	return seen == 1 ? GP_RAM_ALL : seen == 2 ? GP_RAM_NONE : GP_RAM_MIXED;
}

/*
 * What the NVIDIA driver says: 1 the CPU may cache the pages (coherent GPU memory), 0 it may not,
 * -1 it cannot say: its page table is older than 2.0 (driver 580.65.06), which added the flags.
 */
static int driver_cacheable(const struct nvidia_p2p_page_table *pt)
{
#ifdef NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE
	if (pt->version >> 16 >= 2)
		return !!(pt->flags & NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE);
#endif
	return -1;
}

#if defined(CONFIG_X86)
/*
 * Whether the run starting at phys really got write-combining. ioremap_wc looks the memtype up
 * as the user mapping's faults will (an overlapping UC- reservation wins over the WC asked for),
 * and the cache bits of its kernel PTE (one 4 KiB page) say the mode. Without PAT, WC is UC-.
 */
static bool run_is_wc(phys_addr_t phys)
{
	pteval_t want = pgprot_val(pgprot_writecombine(__pgprot(0))) & _PAGE_CACHE_MASK;
	void __iomem *v;
	unsigned int level;
	bool wc = false;
	pte_t *pte;

	if (!pat_enabled())
		return false;
	v = ioremap_wc(phys, PAGE_SIZE);
	if (!v)
		return false;
	pte = lookup_address((unsigned long)v, &level);
	if (pte && level == PG_LEVEL_4K)
		wc = (pte_flags(*pte) & _PAGE_CACHE_MASK) == want;
	iounmap(v);
	return wc;
}

static bool have_pat(void)
{
	return pat_enabled();
}
#else
static bool run_is_wc(phys_addr_t phys)
{
	return true;    /* no memtype list: the VMA's attributes are what the pages get */
}

static bool have_pat(void)
{
	return true;
}
#endif

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

/* Reserve the runs of BAR pages write-combining; map_type: what they really got. */
static void reserve_wc(struct gp_pin *p, const struct nvidia_p2p_page_table *pt)
{
	u32 i, j;
	int rc = 0;

	for (i = 0; i < p->npages; i = j) {
		j = run_end(p, pt, i);
		rc = arch_io_reserve_memtype_wc(pt->pages[i]->physical_address,
						(u64)(j - i) * p->page_size);
		if (rc)
			break;
	}
	if (rc) {
		free_runs(p, pt, i);
		p->map_type = GPUP2P_MAP_UC;
		pr_warn_ratelimited("pin %llu: write-combining refused (%d), mapped uncached\n",
				    p->id, rc);
		return;
	}
	p->wc_reserved = true;    /* given back at release, whatever type it got */
	if (!have_pat()) {
		p->map_type = GPUP2P_MAP_UC;
		pr_notice_once("no PAT (CPU or nopat): write-combining is uncached (UC-) here\n");
		return;
	}
	for (i = 0; i < p->npages; i = j) {
		j = run_end(p, pt, i);
		if (!run_is_wc(pt->pages[i]->physical_address)) {
			p->map_type = GPUP2P_MAP_UC;
			pr_warn_ratelimited("pin %llu: an uncached mapping came first: uncached\n",
					    p->id);
			return;
		}
	}
}

int gp_map_reserve(struct gp_pin *p)
{
	const struct nvidia_p2p_page_table *pt = p->pt;
	enum gp_ram ram = in_ram(p, pt);
	int cacheable = driver_cacheable(pt);

	p->map_type = gp_map_type();
	p->wc_reserved = false;
	if (ram == GP_RAM_MIXED) {
		/* no one mode fits both: RAM must stay write-back (its kernel mapping is) */
		pr_err_ratelimited("pin %llu (va 0x%llx): pages partly in System RAM: refused\n",
				   p->id, p->va);
		return -EOPNOTSUPP;
	}
	if (ram == GP_RAM_ALL) {
		if (!cacheable)    /* the kernel maps that RAM write-back: so must we */
			pr_warn_ratelimited("pin %llu (va 0x%llx): RAM, not CPU-cacheable: WB\n",
					    p->id, p->va);
		p->map_type = GPUP2P_MAP_WB;
		return 0;
	}
	if (cacheable > 0)
		pr_notice_ratelimited("pin %llu (va 0x%llx): CPU-cacheable, not RAM: not WB\n",
				      p->id, p->va);
	if (p->map_type == GPUP2P_MAP_WC)
		reserve_wc(p, pt);
	return 0;
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
	else if (type != GPUP2P_MAP_WB)    /* write-back: the VMA's own cacheable attributes */
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	/* the reference taken by gp_pin_lookup() now belongs to the VMA */
	vma->vm_private_data = p;
	vma->vm_ops = &gp_vm_ops;
	atomic_inc(&p->nmaps);
	atomic64_inc(&gp_stats.maps);
	return 0;
}
