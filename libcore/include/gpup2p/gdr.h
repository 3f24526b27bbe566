/* gpup2p — GPUDirect RDMA per GPU–NIC pair, by NCCL's rules (src/graph/paths.cc ncclTopoCheckGdr,
 * src/transport/net_ib/gdr.cc, src/transport/net.cc): the NIC must reach GPU memory (a peer-memory
 * module, or dma-buf: CUDA's DMA_BUF_SUPPORTED and ibv_reg_dmabuf_mr), the GPU must support it (CUDA's
 * GPU_DIRECT_RDMA_SUPPORTED), and the pair must be within NCCL_NET_GDR_LEVEL (default PXB; on C2C
 * systems such as Grace Hopper NCCL also allows P2C, which this PCI model does not detect). When both
 * paths are there NCCL registers through dma-buf and falls back to the peer-memory module, the order
 * `bench rdma --mem auto` follows too. Software RDMA (rxe, siw) never reaches GPU memory. Pure logic
 * over the topology model and the facts the caller gathered; nothing is probed here. */
#ifndef GPUP2P_GDR_H
#define GPUP2P_GDR_H

#include <stddef.h>

#include "gpup2p/root.h"
#include "gpup2p/topo.h"

/* How a NIC registers GPU memory. */
enum gp_gdr_path { GP_GDR_NONE = 0, GP_GDR_DMABUF, GP_GDR_PEERMEM, GP_GDR_UNKNOWN };

/* Why a pair has no GPUDirect RDMA (flags). */
#define GP_GDR_SOFT   0x1u   /* the RDMA device is software RDMA (rxe, siw) */
#define GP_GDR_NOPATH 0x2u   /* no peer-memory module and no dma-buf */
#define GP_GDR_NOGPU  0x4u   /* CUDA says the GPU does not support GPUDirect RDMA */
#define GP_GDR_FAR    0x8u   /* the pair is beyond NCCL_NET_GDR_LEVEL (default PXB) */

/* The machine-wide facts the caller learned (doctor: /proc/modules and peermem.dmabuf's parts). */
struct gp_gdr_sys {
	int peermem;              /* nvidia_peermem (or nv_peer_mem) loaded: 1, 0, -1 unknown */
	int dmabuf;               /* every dma-buf part there: 1; a part missing: 0; none missing, one unknown: -1 */
	const char *dmabuf_why;   /* dmabuf 0: the parts missing; -1: those unknown ("" or NULL: not said) */
	const int *gpu_gdr;       /* per topology GPU: CUDA's GPU_DIRECT_RDMA_SUPPORTED 1, 0, -1 unknown; NULL all unknown */
	const int *gpu_cc;        /* per topology GPU: compute capability x10 (90 is 9.0), 0 unknown; NULL all unknown */
	int (*soft)(void *arg, const char *dev); /* 1 when RDMA device dev is software RDMA, from what the caller
	                             read already; NULL: gp_gdr_soft asks sysfs */
	void *soft_arg;
};

struct gp_gdr_verdict {
	int possible;             /* NCCL would use GPUDirect RDMA on this pair: 1, 0 (why), -1 unknown */
	unsigned why;             /* GP_GDR_* flags, every one that applies */
	enum gp_gdr_path path;    /* the path the NIC would use (even when why has GP_GDR_FAR): NCCL's order */
	int both;                 /* path dma-buf and a peer-memory module loaded too (NCCL's fallback) */
	enum gp_topo_class dist;  /* PCIe class of the pair */
	int pxn;                  /* far pair: a GPU NVLinked to this one within PXB of the NIC (NCCL's PXN relay), or -1 */
	char reason[512];         /* possible 0: why, each part; -1: what is unknown; 1: "" */
	char read_note[256];      /* NCCL_NET_GDR_READ's default applies: sends from this GPU stage in host memory */
};

/* The verdict for topology GPU gpu and the NIC of RDMA device dev. A software RDMA device is one
 * without /sys/class/infiniband/DEV/device under t's root. 0, or -ENOENT when either is not in t. */
int gp_gdr_pair(const struct gp_topo *t, int gpu, const char *dev, const struct gp_gdr_sys *s,
		struct gp_gdr_verdict *v);

/* The path's token as bench rdma's JSON and doctor's evidence write it: "dmabuf", "peermem", "none",
 * "unknown". */
const char *gp_gdr_path_id(enum gp_gdr_path p);

/* The path in words: "dma-buf", "nvidia-peermem", "none", "unknown". */
const char *gp_gdr_path_name(enum gp_gdr_path p);

/* NCCL's order when both paths are there: first [0], then [1] (dma-buf, then the peer-memory module). */
extern const enum gp_gdr_path gp_gdr_order[2];

/* Is a peer-memory module loaded, as NCCL tests it (/sys/kernel/mm/memory_peers/nv_mem/version,
 * nv_mem_nc/version, /sys/module/nvidia_peermem/version; also .../initstate)? 1 yes, 0 no. */
int gp_gdr_peermem_loaded(const struct gp_root *r);

/* 1 when RDMA device dev is software RDMA (no /sys/class/infiniband/DEV/device under r). */
int gp_gdr_soft(const struct gp_root *r, const char *dev);

#endif
