/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Test only (never installed): the control interface of nvp2p_stub.ko, /dev/nvp2p_stub. */
#ifndef NVP2P_STUB_H
#define NVP2P_STUB_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define NVP2P_STUB_VA_BASE 0x7e0000000000ULL /* "GPU virtual addresses" start here */
#define NVP2P_STUB_SCATTER 0x1u  /* physical pages of the range in reverse order */
#define NVP2P_STUB_NOMEM   0x2u  /* pinning the range fails with -ENOMEM (BAR1 exhausted) */
/* The range is freed while it is being pinned: nvidia_p2p_get_pages registers the free callback,
 * has another thread call it, and returns only when that callback has returned or after
 * NVP2P_STUB_RACE_MS (a client whose callback waits for the pin to be complete). */
#define NVP2P_STUB_FREE_IN_GET 0x4u
#define NVP2P_STUB_RACE_MS 300
/* Coherent GPU memory (Grace Hopper's, onlined as System RAM): the range's pages are guest RAM, and
 * bar_off says their physical address. */
#define NVP2P_STUB_COHERENT 0x8u
/* The page table a driver 580.65.06+ hands out: version 2.0, with flags (CPU_CACHEABLE 0x1 when
 * COHERENT). Without it, 1.2 (no flags). */
#define NVP2P_STUB_TABLE_V2 0x10u

struct nvp2p_stub_alloc {
	__u64 len;      /* in: bytes (rounded up to 64 KiB) */
	__u64 va;       /* out: "GPU virtual address" */
	__u64 bar_off;  /* out: offset of the first byte in the ivshmem BAR (without SCATTER);
			 * COHERENT: its physical address */
	__u32 flags;
	__u32 pad;
};

/* What the stub saw its client do wrong (each also logged). */
struct nvp2p_stub_stats {
	__u64 live;             /* page tables handed out and not yet given back */
	__u64 callbacks;        /* free callbacks called */
	__u64 put_after_free;   /* put_pages after the free callback (the driver freed the table) */
	__u64 bad_calls;        /* calls the real driver refuses (NULL callback, wrong put, ...) */
};

#define NVP2P_STUB_ALLOC _IOWR('n', 1, struct nvp2p_stub_alloc)
#define NVP2P_STUB_FREE  _IOW('n', 2, __u64)   /* fires the free callbacks of the range's pins */
#define NVP2P_STUB_LIVE  _IOR('n', 3, __u64)   /* page tables handed out and not yet given back */
#define NVP2P_STUB_STATS _IOR('n', 4, struct nvp2p_stub_stats)

/* The range at va is freed while it is being mapped: when the mmap handler of the file behind fd
 * next returns 0 in the arming process, the stub frees the range (its free callbacks run, on
 * another CPU) and lets the handler's caller go on only when they have returned, i.e. after the
 * handler and before the kernel links the new mapping into the process (a kretprobe on the
 * handler; needs two CPUs). NVP2P_STUB_MMAP_FIRED disarms and says what happened: 1 (fired),
 * 0 (no mmap came), or -errno (-EOPNOTSUPP: one CPU, -ETIMEDOUT: the callbacks took over 2 s). */
struct nvp2p_stub_free_in_mmap {
	__u64 va;
	__s32 fd;
	__u32 pad;
};

#define NVP2P_STUB_FREE_IN_MMAP _IOW('n', 5, struct nvp2p_stub_free_in_mmap)
#define NVP2P_STUB_MMAP_FIRED   _IOR('n', 6, __s64)

#endif
