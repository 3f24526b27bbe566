/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * gpup2p — the interface between gpup2p.ko (/dev/gpup2p) and user space, shared by the driver and
 * libcore. Every structure starts with its size and a flags word: the driver rejects a size it does
 * not know and any flag it does not know. The ioctl numbers encode the real structure sizes (no
 * pointers in them). A caller first exchanges versions with GPUP2P_IOC_VERSION; each side states
 * the oldest ABI of the other it accepts.
 *
 * Pinned memory is mapped with mmap(2) on the same file descriptor: the offset is the pin's
 * mmap_offset (from GPUP2P_IOC_INFO) plus a multiple of 4 KiB inside the pinned range; any number
 * of mappings of any part of a pin may exist. Pages are mapped when first touched; once the pin is
 * invalidated (the GPU memory freed) or unpinned, every access to its mappings gets SIGBUS.
 */
#ifndef GPUP2P_IOCTL_H
#define GPUP2P_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define GPUP2P_ABI_MAJOR 1
#define GPUP2P_ABI_MINOR 0

#define GPUP2P_DEVICE "/dev/gpup2p"
#define GPUP2P_IOC_MAGIC 0xB7

/* GPU pages and the granularity of pins: the NVIDIA driver pins 64 KiB pages. */
#define GPUP2P_GPU_PAGE_SIZE (64ULL << 10)
/* Largest single pin (1 TiB) and the stride of pins in the mmap offset space. */
#define GPUP2P_PIN_MAX (1ULL << 40)

struct gpup2p_version {
	__u32 size;             /* sizeof(struct gpup2p_version) */
	__u32 flags;            /* 0 */
	__u32 user_major;       /* in: the caller's ABI */
	__u32 user_minor;
	__u32 abi_major;        /* out: the driver's ABI */
	__u32 abi_minor;
	__u32 min_user_major;   /* out: the oldest caller ABI the driver accepts */
	__u32 min_user_minor;
};

/* Pin flags */
/* No free callback: stays pinned until unpinned. EOPNOTSUPP where the NVIDIA driver has no
 * persistent pins (before 515, or gpup2p.ko built without its header or Module.symvers: see
 * /sys/class/misc/gpup2p/persistent) or refuses them (MIG, vGPU). */
#define GPUP2P_PIN_PERSISTENT 0x1u
#define GPUP2P_PIN_FLAGS      (GPUP2P_PIN_PERSISTENT)

struct gpup2p_pin {
	__u32 size;
	__u32 flags;            /* GPUP2P_PIN_* */
	__u64 va;               /* GPU virtual address (cuMemAlloc), 64 KiB aligned */
	__u64 len;              /* bytes, a multiple of 64 KiB, at most GPUP2P_PIN_MAX */
	__u64 handle;           /* out */
};

struct gpup2p_unpin {
	__u32 size;
	__u32 flags;            /* 0 */
	__u64 handle;
};

/* Mapping types (how mmap maps the BAR pages) */
#define GPUP2P_MAP_WC 1         /* write-combined (x86 PAT; arm64 Normal-NC) */
#define GPUP2P_MAP_UC 2         /* uncached */
#define GPUP2P_MAP_WB 3         /* cached (coherent platforms) */

/* Pin states */
#define GPUP2P_STATE_VALID       1
#define GPUP2P_STATE_INVALIDATED 2  /* the NVIDIA driver freed the memory: mappings are gone */

struct gpup2p_info {
	__u32 size;
	__u32 flags;            /* 0 */
	__u64 handle;           /* in */
	__u64 va;               /* out: as pinned */
	__u64 len;
	__u64 mmap_offset;      /* out: mmap offset of the pin's first byte */
	__u64 pin_ns;           /* out: time nvidia_p2p_get_pages took */
	__u32 page_size;        /* out: GPU page size from the page table, bytes */
	__u32 npages;
	__u32 nruns;            /* physically contiguous runs of pages */
	__u32 map_type;         /* GPUP2P_MAP_*: what the pages get (UC: WC refused, overridden) */
	__u32 state;            /* GPUP2P_STATE_* */
	__u32 nmaps;            /* live user mappings of this pin */
	__u32 pin_flags;        /* the flags it was pinned with */
	__u32 reserved;
};

#define GPUP2P_IOC_VERSION _IOWR(GPUP2P_IOC_MAGIC, 0x00, struct gpup2p_version)
#define GPUP2P_IOC_PIN     _IOWR(GPUP2P_IOC_MAGIC, 0x01, struct gpup2p_pin)
#define GPUP2P_IOC_UNPIN   _IOW(GPUP2P_IOC_MAGIC, 0x02, struct gpup2p_unpin)
#define GPUP2P_IOC_INFO    _IOWR(GPUP2P_IOC_MAGIC, 0x03, struct gpup2p_info)

#endif
