// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpup2p.ko — pins: nvidia_p2p_get_pages, the free callback, unpin (mappings are in map.c).
 * Locking: gp_file.lock guards the list of pins; gp_pin.lock guards a pin's state and
 * page table. The NVIDIA driver may call the free callback as soon as get_pages has registered it,
 * before get_pages returns: the pin's lock is held from before get_pages until the pin is complete
 * and on its file's list, and the callback waits for it (as GDRCopy's gdrdrv does). It is never
 * held across put_pages, which waits for a callback in flight. The driver calls back with its own
 * locks held: the callback takes only the pin's lock and never calls put_pages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "gpup2p_internal.h"

/* Pin ids 1..pin_ids, handed out in turn and reused once free (mmap offsets stay below 2^63). */
#define GP_PIN_IDS_MAX ((1U << (63 - GPUP2P_PIN_SHIFT)) - 1)
static DEFINE_XARRAY_ALLOC1(pin_id_xa);
static u32 next_id;
static unsigned int pin_ids = GP_PIN_IDS_MAX;

static int set_pin_ids(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int rc = kstrtouint(val, 0, &n);

	if (rc)
		return rc;
	if (!n || n > GP_PIN_IDS_MAX)
		return -ERANGE;
	*(unsigned int *)kp->arg = n;
	return 0;
}

static const struct kernel_param_ops pin_ids_ops = {
	.set = set_pin_ids,
	.get = param_get_uint,
};
module_param_cb(pin_ids, &pin_ids_ops, &pin_ids, 0444);
MODULE_PARM_DESC(pin_ids, "how many pins may exist at once (1 to 8388607, the default)");

/* The NVIDIA driver's symbols this module needs, for `gpup2p enable` to name a missing one. */
#if defined(NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API)
#define GP_PERSISTENT_SYMS " nvidia_p2p_get_pages_persistent nvidia_p2p_put_pages_persistent"
#elif defined(NVIDIA_P2P_CAP_PERSISTENT_PAGES)
#define GP_PERSISTENT_SYMS " nvidia_p2p_cap_persistent_pages"
#else
#define GP_PERSISTENT_SYMS ""
#endif
MODULE_INFO(nvidia_p2p, "nvidia_p2p_get_pages nvidia_p2p_put_pages nvidia_p2p_free_page_table"
	    GP_PERSISTENT_SYMS);

/* Persistent pins (no free callback): nvidia_p2p_get_pages_persistent (driver 535+), or a NULL
 * callback where the driver says it takes one (515-530); decided from the driver's header at build
 * time, as GDRCopy does. */
bool gp_pin_persistent_supported(void)
{
#if defined(NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API)
	return true;
#elif defined(NVIDIA_P2P_CAP_PERSISTENT_PAGES)
	return nvidia_p2p_cap_persistent_pages != 0;
#else
	return false;
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

	if (p->id)
		xa_erase(&pin_id_xa, p->id);
	kfree(p);
}

void gp_pin_put(struct gp_pin *p)
{
	kref_put(&p->ref, pin_free);
}

static void zap(struct gp_pin *p)
{
	unmap_mapping_range(p->mapping, (loff_t)p->id << GPUP2P_PIN_SHIFT, p->len, 1);
}

/* Called by the NVIDIA driver when the pinned memory is freed (cudaFree, process exit), perhaps
 * before get_pages has returned: the pin's lock makes it wait until the pin is complete. Once the
 * state is GP_INVALID no fault maps a page (map.c); the zap clears those already mapped, so every
 * later access to a mapping of the pin gets SIGBUS. */
static void gp_free_callback(void *data)
{
	struct gp_pin *p = data;
	struct nvidia_p2p_page_table *pt;

	mutex_lock(&p->lock);
	if (p->state != GP_VALID) {
		mutex_unlock(&p->lock);
		return; /* being unpinned: its put_pages, waiting for us, does the rest */
	}
	p->state = GP_INVALID;
	pt = p->pt;
	p->pt = NULL;
	kref_get(&p->ref); /* an unpin may drop the others as soon as the lock is free */
	mutex_unlock(&p->lock);
	zap(p);
	gp_map_release(p, pt);
	nvidia_p2p_free_page_table(pt);
	atomic64_inc(&gp_stats.invalidations);
	atomic64_dec(&gp_stats.pins);
	atomic64_sub(p->len, &gp_stats.bytes_pinned);
	pr_info("pin %llu (va 0x%llx, %llu bytes) invalidated: the GPU memory was freed\n",
		p->id, p->va, p->len);
	kref_put(&p->ref, pin_free);
}

static int get_pages(struct gp_pin *p)
{
	if (!(p->flags & GPUP2P_PIN_PERSISTENT))
		return nvidia_p2p_get_pages(0, 0, p->va, p->len, &p->pt, gp_free_callback, p);
#if defined(NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API)
	return nvidia_p2p_get_pages_persistent(p->va, p->len, &p->pt, 0);
#elif defined(NVIDIA_P2P_CAP_PERSISTENT_PAGES)
	return nvidia_p2p_get_pages(0, 0, p->va, p->len, &p->pt, NULL, p);
#else
	return -EOPNOTSUPP;
#endif
}

static int put_pages(struct gp_pin *p, struct nvidia_p2p_page_table *pt)
{
#if defined(NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API)
	if (p->flags & GPUP2P_PIN_PERSISTENT)
		return nvidia_p2p_put_pages_persistent(p->va, pt, 0);
#endif
	return nvidia_p2p_put_pages(0, 0, p->va, pt);
}

static int check_request(const struct gpup2p_pin *req)
{
	if (req->flags & ~GPUP2P_PIN_FLAGS)
		return -EINVAL;
	if (!req->len || req->len > GPUP2P_PIN_MAX || (req->va | req->len) & GPUP2P_ALIGN_MASK)
		return -EINVAL;
	if (req->va + req->len < req->va)
		return -EOVERFLOW;
	if ((req->flags & GPUP2P_PIN_PERSISTENT) && !gp_pin_persistent_supported()) {
		pr_err_ratelimited("persistent pin refused: built without %s\n",
				   "nvidia_p2p_get_pages_persistent");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* A get_pages error, logged with its likely cause; the kernel-only ENOTSUPP becomes EOPNOTSUPP. */
static int get_pages_failed(const struct gp_pin *p, int rc)
{
	const char *why = "";

	if (rc == -EINVAL)
		why = " (not GPU memory of this process, or a GPU refusing pins)";
	else if (rc == -ENOMEM)
		why = " (BAR1 space exhausted?)";
	else if (rc == -ENOTSUPP)
		why = " (not supported: MIG or vGPU?)";
	atomic64_inc(&gp_stats.pin_failures);
	pr_err_ratelimited("nvidia_p2p_get_pages%s(va 0x%llx, %llu bytes) failed: %d%s\n",
			   p->flags & GPUP2P_PIN_PERSISTENT ? "_persistent" : "", p->va, p->len, rc,
			   why);
	return rc == -ENOTSUPP ? -EOPNOTSUPP : rc;
}

/* Under the pin's lock: page size and physically contiguous runs of the table get_pages gave. */
static int read_table(struct gp_pin *p)
{
	const struct nvidia_p2p_page_table *pt = p->pt;

	p->page_size = page_bytes(pt);
	p->npages = pt->entries;
	/* 2.0 (driver 580.65.06) appended a flags word and kept the rest */
	if (pt->version >> 16 < 1 || pt->version >> 16 > 2 || !p->page_size || !p->npages ||
	    (u64)p->npages * p->page_size < p->len) {
		pr_err("page table of va 0x%llx unusable (version 0x%x, page size %u, %u pages)\n",
		       p->va, pt->version, pt->page_size, pt->entries);
		return -EIO;
	}
	p->nruns = 1;
	for (u32 i = 1; i < p->npages; i++)
		if (pt->pages[i]->physical_address !=
		    pt->pages[i - 1]->physical_address + p->page_size)
			p->nruns++;
	return 0;
}

int gp_pin_create(struct gp_file *f, struct gpup2p_pin *req)
{
	struct gp_pin *p;
	bool pinned = false;
	ktime_t t0;
	u32 id;
	int rc = check_request(req);

	if (rc)
		return rc;
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
	p->state = GP_NEW;
	rc = xa_alloc_cyclic(&pin_id_xa, &id, p, XA_LIMIT(1, pin_ids), &next_id, GFP_KERNEL);
	if (rc < 0) {
		if (rc == -EBUSY)
			rc = -ENOSPC;
		goto out;
	}
	p->id = id;
	mutex_lock(&p->lock);
	t0 = ktime_get();
	rc = get_pages(p);
	p->pin_ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	if (rc) {
		rc = get_pages_failed(p, rc);
	} else {
		pinned = true;
		rc = read_table(p);
	}
	if (!rc)
		rc = gp_map_reserve(p);
	if (!rc) {
		p->state = GP_VALID;
		mutex_lock(&f->lock);
		list_add_tail(&p->node, &f->pins); /* the list holds the first reference */
		mutex_unlock(&f->lock);
		atomic64_inc(&gp_stats.pins);
		atomic64_add(p->len, &gp_stats.bytes_pinned);
		req->handle = p->id;
	} else {
		p->state = GP_UNPINNED; /* a callback waiting for the lock leaves the table alone */
	}
	mutex_unlock(&p->lock);
	if (!rc)
		return 0;
	if (pinned)
		put_pages(p, p->pt);
out:
	kref_put(&p->ref, pin_free);
	return rc;
}

/* Find a pin of the file: with take, remove it from the list (the list's reference passes to the
 * caller); else take a new reference. */
struct gp_pin *gp_pin_lookup(struct gp_file *f, u64 id, int take)
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
	p->pt = NULL;
	p->state = GP_UNPINNED;
	mutex_unlock(&p->lock);
	zap(p);
	if (was == GP_VALID) {
		int rc;

		gp_map_release(p, pt);
		rc = put_pages(p, pt); /* waits for a free callback in flight */

		if (rc)
			pr_err_ratelimited("put_pages(va 0x%llx) failed: %d (freed meanwhile?)\n",
					   p->va, rc);
		atomic64_dec(&gp_stats.pins);
		atomic64_sub(p->len, &gp_stats.bytes_pinned);
	}
	kref_put(&p->ref, pin_free);
}

int gp_pin_remove(struct gp_file *f, u64 handle)
{
	struct gp_pin *p = gp_pin_lookup(f, handle, 1);

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
	struct gp_pin *p = gp_pin_lookup(f, info->handle, 0);

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
	info->map_type = p->map_type;
	info->state = p->state == GP_VALID ? GPUP2P_STATE_VALID : GPUP2P_STATE_INVALIDATED;
	info->nmaps = (u32)atomic_read(&p->nmaps);
	info->pin_flags = p->flags;
	mutex_unlock(&p->lock);
	kref_put(&p->ref, pin_free);
	return 0;
}
