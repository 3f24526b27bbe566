/* gpup2p doctor — what a family file needs: adding findings, and the system files no other module
 * owns (read once, on first use, through the root). Internal to libcore/doctor/ and its tests. */
#ifndef GPUP2P_DOCTOR_CHECK_H
#define GPUP2P_DOCTOR_CHECK_H

#include <stddef.h>

#include "gpup2p/doctor.h"

#define GP_DOCTOR_FAMILY(var, name, title, table) GP_DOCTOR_FAMILY_CLEANUP(var, name, title, table, NULL)
/* A family whose checks keep something in the context: cleanup frees it (struct gp_doctor_family). */
#define GP_DOCTOR_FAMILY_CLEANUP(var, name, title, table, cleanup) \
	const struct gp_doctor_family var = { name, title, table, (int)(sizeof(table) / sizeof(table[0])), cleanup }

/* The families (one file each). */
extern const struct gp_doctor_family gp_doctor_fam_driver, gp_doctor_fam_gpu, gp_doctor_fam_bar,
	gp_doctor_fam_iommu, gp_doctor_fam_acs, gp_doctor_fam_pcie, gp_doctor_fam_topo, gp_doctor_fam_numa,
	gp_doctor_fam_nvlink, gp_doctor_fam_p2p, gp_doctor_fam_peermem, gp_doctor_fam_rdma, gp_doctor_fam_nic,
	gp_doctor_fam_kmod, gp_doctor_fam_limits, gp_doctor_fam_expect;

/* Add a finding of the check being run (c->cur). Returns it, or NULL when out of memory (the
 * gp_finding_* helpers accept NULL). */
struct gp_finding *gp_doctor_add(struct gp_doctor_ctx *c, enum gp_sev sev, const char *subject, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A source file the check needs is missing: "unknown" on a live system (could not be read: err),
 * under a snapshot whose marker says its live source could not give it either, and under a root
 * where it is there but refused (err other than ENOENT/ENOTDIR: a link out of the root, a pipe);
 * otherwise "skipped" under a root (not captured there). what names the file. */
struct gp_finding *gp_doctor_missing(struct gp_doctor_ctx *c, const char *subject, const char *what, int err);

/* Set the finding's fix (one command, boot parameter or firmware setting). */
void gp_finding_fix(struct gp_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append a BDF to the finding's list. */
void gp_finding_bdf(struct gp_finding *f, const char *bdf);

/* Append an evidence entry: key (a file, register or fact) and the value seen. */
void gp_finding_ev(struct gp_finding *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Append a measured copy rate (bytes/s) from topology entry src to dst (-1: host memory). */
void gp_finding_figure(struct gp_finding *f, int src, int dst, double bytes_per_s);

/* Release a findings list. */
void gp_findings_free(struct gp_findings *f);

/* driver.* checks that ask NVML and libcuda (doctor/driver_rt.c), listed in driver.c's table. */
void gp_doctor_check_version(struct gp_doctor_ctx *c);
void gp_doctor_check_persistence(struct gp_doctor_ctx *c);
void gp_doctor_check_cuda_init(struct gp_doctor_ctx *c);
void gp_doctor_check_fabric(struct gp_doctor_ctx *c);

/* Release the node's facts the expect checks gathered (doctor/expect.c); called by gp_doctor_ctx_free. */
void gp_doctor_expect_free(struct gp_doctor_ctx *c);

/* Release the p2p checks' CUDA session (doctor/p2p.c); called by gp_doctor_ctx_free. */
void gp_doctor_p2p_free(struct gp_doctor_ctx *c);

/* gpu.xid (doctor/gpu_xid.c) and gpu.throttle (doctor/gpu_throttle.c), listed in gpu.c's table. */
void gp_doctor_check_xid(struct gp_doctor_ctx *c);
void gp_doctor_check_throttle(struct gp_doctor_ctx *c);

/* Parse a kernel log line "... NVRM: Xid (PCI:0000:3b:00): 79, ...": 1 and the device (function 0)
 * and code; 0 when the line is no Xid line; -EINVAL when it starts like one but does not parse. */
int gp_doctor_xid_parse(const char *line, char bdf[GP_BDF_LEN], int *xid);

/* --- peer memory (doctor/peermem.c), shared with rdma.gdr ------------------------------------- */

/* nvidia_peermem's and nv_peer_mem's states from /proc/modules (1 loaded, 0 not); 0 when read, else
 * -1 after adding the finding (subject nvidia_peermem) that says why not. */
int gp_doctor_peermem_mods(struct gp_doctor_ctx *c, int *nvpm, int *legacy);

/* Whether the dma-buf GPUDirect RDMA path is usable, and the evidence: the parts missing (why), the
 * parts that could not be learned (unk) and those that are there (have). */
struct gp_doctor_dmabuf {
	int usable;                        /* 1 every part there; 0 a part missing; -1 none missing, one unknown */
	int open;                          /* gp_doctor_nv_open of the version line */
	int nunk;                          /* parts unknown; offline: the live parts are one */
	char osrel[128];
	char why[512], unk[384], have[256];
};

/* Fill d: the open kernel module (R515+), kernel 5.12+, and the live parts (CUDA's DMA_BUF_SUPPORTED,
 * ibv_reg_dmabuf_mr). 0, or -1 after adding the finding (on subject) for a file that could not be read
 * or a driver that is not loaded. */
int gp_doctor_dmabuf_state(struct gp_doctor_ctx *c, const char *subject, struct gp_doctor_dmabuf *d);

/* Add the evidence of a dma-buf verdict to f. */
void gp_doctor_dmabuf_ev(struct gp_finding *f, const struct gp_doctor_dmabuf *d);

/* rdma.gdr (doctor/gdr.c), listed in rdma.c's table. */
void gp_doctor_check_gdr(struct gp_doctor_ctx *c);

/* --- prefetched sources (doctor/prefetch.c) ----------------------------------------------------- */

/* The symbol kmod.nv_p2p_api looks for (and the one prefetch scans /proc/kallsyms for). */
#define GP_DOCTOR_P2P_SYM "nvidia_p2p_get_pages"

/* 1 when a selected check (on may be NULL: all; an active one only when active) reads a source in
 * src, or has this id (src 0 or id NULL: not asked). */
int gp_doctor_wants(const unsigned char *on, int active, unsigned src, const char *id);

/* libcuda's prefetched probe, joined: a malloc'd copy, or NULL (none started, or no memory). */
struct gp_cuda_probe *gp_doctor_pre_cuda(struct gp_doctor_pre *p);

/* The prefetched kallsyms answer for sym, joined: 1 and *has set (as gp_doctor_kallsyms_scan
 * returns), or 0 when none was prefetched for sym. */
int gp_doctor_pre_kallsyms(struct gp_doctor_pre *p, const char *sym, int *has);

/* libcuda probed once per run (live only; doctor/driver_rt.c): what cuInit said, or NULL (no memory). */
const struct gp_cuda_probe *gp_doctor_cuda(struct gp_doctor_ctx *c);

/* libibverbs probed once per run (live only; doctor/rdma.c), or NULL (no memory). */
const struct gp_verbs_probe *gp_doctor_verbs(struct gp_doctor_ctx *c);

/* --- system files (doctor/sys.c) ------------------------------------------------------------- */

/* Is module `name` in /proc/modules (dashes and underscores alike)? 1 yes, 0 no, -errno when the
 * list could not be read (-ENOENT: not there). */
int gp_doctor_module(struct gp_doctor_ctx *c, const char *name);

/* The first line of /proc/driver/nvidia/version, or NULL (*err = -errno). */
const char *gp_doctor_nv_version(struct gp_doctor_ctx *c, int *err);

/* 1 when the version line names the open kernel module, 0 the proprietary one, -1 unknown. */
int gp_doctor_nv_open(const char *version_line);

/* The driver version ("580.159.04") from the version file or the NVML facts; "" unknown. */
const char *gp_doctor_nv_release(struct gp_doctor_ctx *c);

/* Value of key in /proc/driver/nvidia/params (quotes removed) into buf: 0, -ENOENT no such key,
 * or -errno when the file could not be read (*file_missing set then). */
int gp_doctor_nv_param(struct gp_doctor_ctx *c, const char *key, char *buf, size_t n, int *file_missing);

/* NUMA nodes in /sys/devices/system/node (nodeN), or -errno when the directory is missing. */
int gp_doctor_numa_nodes(struct gp_doctor_ctx *c);

/* The most doctor reads of a text file read whole (/proc/driver/nvidia/params, version). */
#define GP_DOCTOR_TEXT_MAX (1u << 20)

/* Read a small text file under the root (gp_root_read_text): length or -errno (-EFBIG: longer
 * than n - 1 bytes, never cut). */
long gp_doctor_read(struct gp_doctor_ctx *c, const char *path, char *buf, size_t n);

/* 1 when /proc/kallsyms lists sym, 0 not, -errno when it could not be read (the prefetched answer
 * when there is one). */
int gp_doctor_kallsyms_has(struct gp_doctor_ctx *c, const char *sym);

/* gp_doctor_kallsyms_has's reading of /proc/kallsyms under root r (no context: prefetch runs it). */
int gp_doctor_kallsyms_scan(const struct gp_root *r, const char *sym);

/* A device node under the root's /dev: 1 present (*usable: this process may read and write it;
 * offline, a recorded node counts as usable unless it reads "not usable..."), 0 missing, -ENOENT
 * when the root has no /dev, another negative errno (-EXDEV: a link out of the root) when unknown. */
int gp_doctor_devnode(struct gp_doctor_ctx *c, const char *path, int *usable);

/* Did the root capture `group` (a name of the snapshot marker's captured line: "aer", "rdma-ports",
 * "nvidia-gpus", ...)? 1 live, on a tree that is no snapshot (a fixture: what is absent is absent)
 * and on a snapshot that lists it; 0 on a snapshot that does not (an older format): a check whose
 * files are folder listings says "skipped" then, not "ok". */
int gp_doctor_captured(const struct gp_doctor_ctx *c, const char *group);

/* Free what the system-file readers cached. */
void gp_doctor_sys_free(struct gp_doctor_ctx *c);

/* --- helpers shared by the families ---------------------------------------------------------- */

/* The PCI function of topology entry i. */
const struct gp_pci_dev *gp_doctor_dev(const struct gp_doctor_ctx *c, int i);

/* The link above PCI function idx (index in c->pci->devs): the most both ends support, from their
 * maximum speed (GT/s) and width; 0 where unknown. */
void gp_doctor_link_best(const struct gp_doctor_ctx *c, int idx, double *gts, int *width);

/* GB/s one direction of a PCIe link carries at gts GT/s over width lanes (after line encoding:
 * 8b/10b to Gen2, 128b/130b Gen3-5, FLIT Gen6); 0 when unknown. */
double gp_doctor_pcie_gbps(double gts, int width);

/* 1 when some NIC is on the GPU's host bridge or closer (PIX, PXB, PHB); matrix index g. */
int gp_doctor_nic_near(const struct gp_doctor_ctx *c, int g);

/* No NVIDIA GPU (no GPU or NIC): add a "skipped" finding saying so and return 1; else 0. */
int gp_doctor_no_gpu(struct gp_doctor_ctx *c);
int gp_doctor_no_device(struct gp_doctor_ctx *c);

/* 1 when the IOMMU translates the DMA of topology entry i (DMA or DMA-FQ): its group's type; where
 * it has no group or the type is unreadable, the system's mode unless that is mixed (doctor/iommu.c). */
int gp_doctor_translated(const struct gp_doctor_ctx *c, int i);

/* 1 when NVML (live or as a snapshot recorded it) names topology GPU i a GeForce part, else 0. */
int gp_doctor_geforce(const struct gp_doctor_ctx *c, int i);

/* NICs with an RDMA device. */
int gp_doctor_rdma_nics(const struct gp_doctor_ctx *c);

/* NICs whose RDMA device is the NIC's own (a device link): those that can reach GPU memory, unlike
 * software RDMA (rxe, siw) over a NIC's interface. */
int gp_doctor_rdma_hw_nics(struct gp_doctor_ctx *c);

/* 1 when the machine does P2P or GPUDirect: two GPUs, or a GPU and a NIC. */
int gp_doctor_does_p2p(const struct gp_doctor_ctx *c);

/* 1 when NVML's answer is known: live, or a root whose facts file records it (facts, or the reason
 * NVML was unavailable when the snapshot was taken); 0 for a root without the facts file. */
int gp_doctor_nvml_recorded(const struct gp_doctor_ctx *c);

/* No NVML facts: add a finding saying so (unknown with NVML's reason, live or as a snapshot recorded
 * it; skipped under a root without recorded facts) and return 1; else 0. */
int gp_doctor_no_nvml(struct gp_doctor_ctx *c, const char *subject);

/* "GPU Excluded:" of the GPU's /proc/driver/nvidia/gpus/BDF/information: 1 yes, 0 no, 2 no such line
 * (a driver before GPU exclusion), or -errno when the file could not be read. */
int gp_doctor_gpu_excluded(struct gp_doctor_ctx *c, const char *bdf);

/* The NVML facts of topology GPU i, or NULL after adding a finding for it that says why there are
 * none (bound to another driver or excluded: skipped; not in NVML's list: unknown, see gpu.visible). */
const struct gp_gpu_info *gp_doctor_gpu_nvml(struct gp_doctor_ctx *c, int i);

/* Call one(c, i, g) for each topology GPU i with NVML facts g; no GPU, no NVML facts, and a GPU without
 * facts get the finding that says why (gp_doctor_no_gpu, gp_doctor_no_nvml, gp_doctor_gpu_nvml). */
void gp_doctor_each_nvml_gpu(struct gp_doctor_ctx *c,
			     void (*one)(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g));

/* A state field (struct gp_gpu_state) of topology GPU i that a check needs is GP_GPU_NA or
 * GP_GPU_UNKNOWN: add the finding saying why (what names it) and return 1; else 0. */
int gp_doctor_state_missing(struct gp_doctor_ctx *c, int i, long long v, const char *what);

/* doctor --active, live: how long pcie.replay and nvlink.errors let a GPU's counters run between
 * their first read (the GPU facts) and their last. The static doctor reads them while gathering the
 * facts, with no pause. */
#define GP_DOCTOR_COUNTER_WINDOW_S 1.0

/* GPU g's state for the counter checks: under --active on a live root (or the test doubles), its
 * counters read again GP_DOCTOR_COUNTER_WINDOW_S after the first read (once for all GPUs, pausing what
 * is left of the window); otherwise, or when NVML cannot be asked again, the facts' g->st. */
const struct gp_gpu_state *gp_doctor_counters(struct gp_doctor_ctx *c, const struct gp_gpu_info *g);

#endif
