/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * gpup2p — the NVIDIA driver's documented peer-to-peer API, declared by the project for builds
 * without the driver's source (with it, Kbuild uses its nv-p2p.h: NVIDIA_SRC_DIR or
 * /usr/src/nvidia-*). Written from NVIDIA's published interface: nvidia_p2p_get_pages/put_pages/
 * free_page_table and the page table they return (version 1.2: version, page_size, pages, entries,
 * gpu_uuid; 2.0 appends flags). The persistent-pin entry points are declared only when Kbuild
 * found them in the driver's Module.symvers (GPUP2P_SYMVERS_*), under the capability macros of
 * the driver's header.
 */
#ifndef GPUP2P_NV_P2P_DECL_H
#define GPUP2P_NV_P2P_DECL_H

#include <linux/types.h>

#define NVIDIA_P2P_PAGE_SIZE_4KB   0
#define NVIDIA_P2P_PAGE_SIZE_64KB  1
#define NVIDIA_P2P_PAGE_SIZE_128KB 2

struct nvidia_p2p_page {
	u64 physical_address;
	u32 registers[6];          /* per-architecture request registers, unused here */
};

/* Table 2.0 (driver 580.65.06): the CPU may cache the pages (coherent GPU memory, Grace Hopper) */
#define NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE 0x1

struct nvidia_p2p_page_table {
	u32 version;               /* major in the upper 16 bits: 1, or 2 with flags */
	u32 page_size;             /* NVIDIA_P2P_PAGE_SIZE_* */
	struct nvidia_p2p_page **pages;
	u32 entries;
	u8 *gpu_uuid;
	u32 flags;                 /* NVIDIA_P2P_PAGE_TABLE_FLAGS_*: major 2 only */
};

/* Pin [virtual_address, +length) (64 KiB aligned) of the caller's GPU memory; free_callback(data)
 * is called when the memory goes away, possibly before this returns (NULL: -EINVAL since driver
 * 535). 0 or -EINVAL/-ENOTSUPP/-ENOMEM/-EIO. */
int nvidia_p2p_get_pages(u64 p2p_token, u32 va_space, u64 virtual_address, u64 length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data);

/* Release pages pinned by nvidia_p2p_get_pages (never from inside the free callback; waits for one
 * in flight). */
int nvidia_p2p_put_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
			 struct nvidia_p2p_page_table *page_table);

/* Called from the free callback (the driver frees the table once the callback returns). */
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table);

#if defined(GPUP2P_SYMVERS_GET_PAGES_PERSISTENT)
#define NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API
/* Driver 535+: pin without a free callback, until put_pages_persistent (not on MIG or vGPU). */
int nvidia_p2p_get_pages_persistent(u64 virtual_address, u64 length,
				    struct nvidia_p2p_page_table **page_table, u32 flags);
int nvidia_p2p_put_pages_persistent(u64 virtual_address, struct nvidia_p2p_page_table *page_table,
				    u32 flags);
#elif defined(GPUP2P_SYMVERS_CAP_PERSISTENT_PAGES)
#define NVIDIA_P2P_CAP_PERSISTENT_PAGES
/* Drivers 515-530: non-zero when nvidia_p2p_get_pages takes a NULL callback (persistent pages). */
extern int nvidia_p2p_cap_persistent_pages;
#endif

#endif
