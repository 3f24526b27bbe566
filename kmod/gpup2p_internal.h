/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* gpup2p.ko — what the driver's files share. */
#ifndef GPUP2P_INTERNAL_H
#define GPUP2P_INTERNAL_H

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mutex.h>

#ifdef GPUP2P_HAVE_NV_P2P_H
#include "nv-p2p.h"
#else
#include "nv_p2p_decl.h"
#endif

#include "uapi/gpup2p_ioctl.h"

#define GPUP2P_PIN_SHIFT 40 /* log2(GPUP2P_PIN_MAX): a pin's slot in the mmap offset space */
#define GPUP2P_ALIGN_MASK (GPUP2P_GPU_PAGE_SIZE - 1)

/* A mapping of BAR pages: not copied on fork, not expanded, not dumped. vm_flags became read-only
 * behind vm_flags_set() in Linux 6.3: Kbuild probes for it (GPUP2P_HAVE_VM_FLAGS_SET). */
static inline void gp_vma_set_flags(struct vm_area_struct *vma)
{
#ifdef GPUP2P_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
#else
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP;
#endif
}

/* GP_NEW: being pinned (its lock held); GP_UNPINNED: being (or failed to be) unpinned. */
enum gp_state {
	GP_NEW = 0,
	GP_VALID = GPUP2P_STATE_VALID,
	GP_INVALID = GPUP2P_STATE_INVALIDATED,
	GP_UNPINNED = 3,
};

/* One pinned range. Referenced by its file's list, by every VMA that maps it and by a free callback
 * at work. Its id (mmap offset id << GPUP2P_PIN_SHIFT) is taken until the last reference goes. */
struct gp_pin {
	struct kref ref;
	struct list_head node;        /* in gp_file.pins, under gp_file.lock */
	struct address_space *mapping;/* the device inode's: mappings are zapped through it */
	u64 id, va, len;
	u32 flags;
	struct mutex lock;            /* state, pt; held across get_pages, never across put_pages */
	enum gp_state state;
	struct nvidia_p2p_page_table *pt;
	u64 pin_ns;
	u32 page_size, npages, nruns;
	u32 map_type;                 /* GPUP2P_MAP_*: what the pages really get */
	bool wc_reserved;             /* its runs are reserved write-combining (map.c) */
	atomic_t nmaps;
};

/* One open of /dev/gpup2p: usable by the opening process only. */
struct gp_file {
	struct mutex lock;
	struct list_head pins;
	pid_t tgid;
	struct address_space *mapping;
};

/* Counters shown under /sys/class/misc/gpup2p/. */
struct gp_counters {
	atomic64_t pins, bytes_pinned, invalidations, maps, pin_failures;
};
extern struct gp_counters gp_stats;

/* pin.c */
int gp_pin_create(struct gp_file *f, struct gpup2p_pin *req);
int gp_pin_remove(struct gp_file *f, u64 handle);
int gp_pin_info(struct gp_file *f, struct gpup2p_info *info);
void gp_pin_release_all(struct gp_file *f);
/* A pin of the file by id, referenced (take: also taken off the file's list), or NULL. */
struct gp_pin *gp_pin_lookup(struct gp_file *f, u64 id, int take);
/* Drop a reference; the last one frees the pin and its id. */
void gp_pin_put(struct gp_pin *p);
bool gp_pin_persistent_supported(void);

/* map.c */
/* mmap of a pin: checks the request, sets the VMA up; pages are mapped at fault time. */
int gp_pin_mmap(struct gp_file *f, struct vm_area_struct *vma);
/* How the platform maps BAR pages (GPUP2P_MAP_WC on x86 and arm64, else GPUP2P_MAP_UC). */
u32 gp_map_type(void);
/* Under the pin's lock, once pinned: set p->map_type to what the pages really get (WB for coherent
 * GPU memory, WC, or UC where write-combining was refused or overridden), reserving BAR runs
 * write-combining. -EOPNOTSUPP for a table partly in System RAM. */
int gp_map_reserve(struct gp_pin *p);
/* When the page table pt is given up (after the zap): free what gp_map_reserve reserved. */
void gp_map_release(struct gp_pin *p, const struct nvidia_p2p_page_table *pt);

#endif
