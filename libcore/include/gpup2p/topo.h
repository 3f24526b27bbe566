/* gpup2p — the topology: which PCI functions are GPUs and NICs, how each pair
 * is connected (the codes of `nvidia-smi topo -m`: X PIX PXB PHB NODE SYS NV#),
 * and where each sits (host bridge, NUMA node, local CPUs). */
#ifndef GPUP2P_TOPO_H
#define GPUP2P_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "gpup2p/err.h"
#include "gpup2p/gpu.h"
#include "gpup2p/pci.h"

#define GP_TOPO_MATCH_MAX 16
#define GP_TOPO_ANY_DEVICE 0xffffffffu

enum gp_topo_kind { GP_TOPO_GPU = 0, GP_TOPO_NIC = 1 };

/* Pair classes, ordered from closest to farthest (NVML's levels); NV is separate. */
enum gp_topo_class {
	GP_TC_X = 0,     /* the same device */
	GP_TC_NV,        /* NVLink (count in gp_topo_link.nvlinks) */
	GP_TC_PIX,       /* at most one PCIe switch (or bridge) */
	GP_TC_PXB,       /* several PCIe switches, not through the host bridge */
	GP_TC_PHB,       /* through the PCIe host bridge (the CPU) */
	GP_TC_NODE,      /* across host bridges of one NUMA node */
	GP_TC_SYS,       /* across NUMA nodes (the SMP interconnect) */
};

/* `--match VENDOR:DEVICE`: extra endpoints treated as GPUs (device may be any). */
struct gp_topo_match {
	uint32_t vendor;
	uint32_t device;         /* GP_TOPO_ANY_DEVICE for "VENDOR:*" */
};

struct gp_topo_dev {
	int pci;                 /* index in gp_pci.devs */
	enum gp_topo_kind kind;
	char name[16];           /* "GPU0", "NIC1" */
	char label[64];          /* NIC: RDMA name, else net device, else BDF; GPU: NVML name or "" */
	int group;               /* the first entry of its group: a NIC's physical function and those of its
	                            virtual functions on the same path are one group, every other entry
	                            one of its own (text names a group once: "NIC0+126VFs") */
	int members;             /* on a group's first entry: the entries in the group (1: alone) */
	int lead;                /* on a group's first entry: the one named for the group (the PF) */
};

/* One matrix cell, computed when asked for (gp_topo_link_at): nothing of size n*n is kept. */
struct gp_topo_link {
	uint8_t cls;             /* enum gp_topo_class: the code nvidia-smi prints */
	uint8_t pcie;            /* enum gp_topo_class: the PCIe class even when NVLink joins the pair */
	uint8_t switches;        /* PCIe switches crossed below the host bridge */
	int16_t nvlinks;         /* NVLinks between the two, 0 none, -1 not known */
};

struct gp_topo {
	const struct gp_pci *pci;
	const struct gp_gpu_facts *facts;
	int n, ngpu, nnic;
	struct gp_topo_dev *devs;    /* GPUs in PCI bus order, then NICs in nvidia-smi's order: by RDMA
	                                device name (mlx5_2 before mlx5_10), those without one last */
	int16_t *nv;                 /* ngpu*ngpu: NVLinks between GPUs i and j (the first ngpu entries), -1
	                                not known */
	int nvlink_checked;          /* 1 when NVML facts were available */
	int *of_pci;                 /* per PCI function: its index in devs, -1 when not a GPU/NIC */
	unsigned char *on_path;      /* per PCI function: 1 when on a GPU/NIC's path to its host bridge */
};

/* Parse "10de:2330", "1af4:1110" or "15b3:*" into m. 0 or -EINVAL. */
int gp_topo_parse_match(const char *s, struct gp_topo_match *m);

/* 1 when the function is a GPU by default (NVIDIA, class 0x03xx) or matches one of m[0..nm). */
int gp_topo_is_gpu(const struct gp_pci_dev *d, const struct gp_topo_match *m, int nm);

/* 1 when the function is a NIC: network/InfiniBand class with an RDMA device, or a Mellanox/NVIDIA
 * networking (0x15b3) network function. */
int gp_topo_is_nic(const struct gp_pci_dev *d);

/* Compare names in natural order: digit runs as numbers ("mlx5_2" before "mlx5_10"). <0, 0, >0. */
int gp_topo_name_cmp(const char *a, const char *b);

/* Select GPUs and NICs, group virtual functions with their physical function, and note the NVLinks
 * between GPUs; pairs are classified when asked for. facts may be NULL (no NVLink information). */
int gp_topo_build(struct gp_topo *t, const struct gp_pci *p, const struct gp_gpu_facts *facts,
		  const struct gp_topo_match *m, int nm, struct gp_err *e);

/* Release what gp_topo_build allocated. */
void gp_topo_free(struct gp_topo *t);

/* The PCIe class of two functions (by index in p->devs); *switches gets the switch count. Numbers
 * only: the host bridge's number and the chains' indices, a few steps down the chains. */
enum gp_topo_class gp_topo_classify_pcie(const struct gp_pci *p, int a, int b, int *switches);

/* Bridges two functions share from the top of their chains (0 when under different host bridges). */
int gp_topo_common_bridges(const struct gp_pci_dev *a, const struct gp_pci_dev *b);

/* The matrix entry for PCI function pci (index in p->devs), or NULL when it is not a GPU/NIC. */
const struct gp_topo_dev *gp_topo_find(const struct gp_topo *t, int pci);

/* Display name of a PCI function: the NVML name of a GPU when known, else pci.ids' device name. */
const char *gp_topo_display_name(const struct gp_topo *t, int pci, char *buf, size_t n);

/* The link between matrix entries i and j, classified now (symmetric: (i, j) and (j, i) are the same). */
struct gp_topo_link gp_topo_link_at(const struct gp_topo *t, int i, int j);

/* A group's name in text: the lead's name, with its virtual functions counted ("NIC0+126VFs"). */
const char *gp_topo_group_name(const struct gp_topo *t, int g, char *buf, size_t n);

/* Entry i's name with nvfs of its virtual functions counted after it ("NIC0+126VFs"; nvfs 0: "NIC0"). */
const char *gp_topo_vfs_name(const struct gp_topo *t, int i, int nvfs, char *buf, size_t n);

/* Fold a listing for people (k = 0..n-1, in[k] a matrix entry or -1 for an item that is none, each
 * entry at most once): a NIC's virtual functions listed with their physical function become one row,
 * "the PF and 126 VFs". vfs[k] gets, on a PF's item, how many of its VFs the listing holds; on those
 * VFs' items -1 - the PF's item (shown in the PF's row, not on their own); 0 on every other item. pos: t->n ints, all -1,
 * left so (scratch, so that a listing costs its own length, not the machine's). */
void gp_topo_fold_vfs(const struct gp_topo *t, const int *in, int n, int *vfs, int *pos);

/* The code as printed: "X", "NV18", "PIX", ... into buf; returns buf. */
const char *gp_topo_code(const struct gp_topo_link *l, char *buf, size_t n);

/* The code of the pair (matrix entries i, j) as gp_topo_code prints it; returns buf. */
const char *gp_topo_code_at(const struct gp_topo *t, int i, int j, char *buf, size_t n);

/* Name of a class without NVLink count ("PIX", "NODE", "NV"). */
const char *gp_topo_class_name(enum gp_topo_class c);

/* NUMA node of a matrix entry (-1 unknown). */
int gp_topo_numa(const struct gp_topo *t, int i);

/* NUMA Affinity of matrix entry i as nvidia-smi topo -m prints it, into buf: its sysfs numa_node; where
 * that is -1, the NUMA nodes whose CPUs its CPU affinity covers ("0", "0-1"); on a machine of one
 * node that node (0 on a kernel without NUMA); else "N/A". */
const char *gp_topo_numa_affinity(const struct gp_topo *t, int i, char *buf, size_t n);

/* GPU NUMA ID of matrix entry i as nvidia-smi topo -m prints it: the NUMA node of the GPU's own memory
 * (NVLink-C2C); "N/A" for PCIe-attached memory, a NIC, or not known (snapshot of facts format 1). */
const char *gp_topo_gpu_numa_id(const struct gp_topo *t, int i, char *buf, size_t n);

/* 1 when PCI function idx lies on the path from a selected GPU/NIC up to its host bridge. */
int gp_topo_on_path(const struct gp_topo *t, int idx);

/* Distinct host bridges ("pci0000:00") in order; returns how many were written (at most max). */
int gp_topo_host_bridges(const struct gp_pci *p, char (*out)[32], int max);

/* NUMA node of a host bridge: the node its functions report (-1 unknown or mixed). */
int gp_topo_host_bridge_numa(const struct gp_pci *p, const char *hb);

/* 1 when the link trained below its maximum speed or width (both known). */
int gp_topo_link_degraded(const struct gp_pci_dev *d);

#endif
