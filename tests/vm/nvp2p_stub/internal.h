/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Test only: what the parts of nvp2p_stub.ko share (stub.c: nvidia_p2p_* and /dev/nvp2p_stub;
 * mmap_race.c: NVP2P_STUB_FREE_IN_MMAP). Not for its clients: they use nvp2p_stub.h. */
#ifndef NVP2P_STUB_INTERNAL_H
#define NVP2P_STUB_INTERNAL_H

#include <linux/types.h>

struct nvp2p_stub_free_in_mmap;

/* Free the allocation that starts at va (NVP2P_STUB_FREE): call the free callback of every
 * non-persistent page table inside it, not under the stub's lock, as the NVIDIA driver does on
 * cudaFree. 0, or -EINVAL when no allocation starts at va. */
long stub_free(u64 va);

/* Arm NVP2P_STUB_FREE_IN_MMAP (caller holds the race lock): a kretprobe on the mmap handler of
 * req->fd's file, for the calling process. 0, or -errno (-EOPNOTSUPP without kretprobes). */
long mmap_race_arm(const struct nvp2p_stub_free_in_mmap *req);

/* Disarm it (caller holds the race lock, or the module is going away) and say what happened:
 * 1 (fired), 0 (no mmap came, or none armed), or -errno (see nvp2p_stub.h). */
long mmap_race_disarm(void);

#endif
