/* gpup2p — the most the links between GPUs, and between each GPU and the host, can carry one way,
 * from the machine's facts: NVLinks (their count times the per-link rate of the GPU's generation) and
 * PCIe (the link's best generation times its width). bench refuses a figure above it: a measurement
 * error, not a fast machine. Unknown facts give no ceiling, never a guessed one. */
#ifndef GPUP2P_LINKCAP_H
#define GPUP2P_LINKCAP_H

#include "gpup2p/bench_plan.h"
#include "gpup2p/gpu.h"
#include "gpup2p/pci.h"

/* A figure above its ceiling by more than this share is a measurement error (timing, not the link:
 * the best copies reach 83% of the H200's NVLink rate and 90% of PCIe). */
#define GP_LINKCAP_MARGIN 0.10

struct gp_linkcap {
	int n;                    /* GPUs, in the caller's order (bench: CUDA's, PCI bus order) */
	double *pcie;             /* each GPU's PCIe link, GB/s one way; 0 unknown, or host memory reached
	                             through NVLink-C2C (no PCIe ceiling) */
	int *gen, *width;         /* the PCIe link it was computed from */
	double *rate;             /* each GPU's GB/s per NVLink one way (by generation), 0 unknown */
	int *port;                /* each GPU's active NVLinks, 0 none, -1 unknown */
	int *links;               /* n * n: NVLinks between GPUs a and b (direct or through NVSwitch), 0
	                             none, -1 unknown */
};

/* The facts of the GPUs at PCI addresses bdf[0..n) from the PCI model (may be NULL) and the GPU facts
 * (may be NULL or unavailable). 0 or -ENOMEM. */
int gp_linkcap_load(struct gp_linkcap *L, const struct gp_pci *pci, const struct gp_gpu_facts *f,
		    const char *const *bdf, int n);
void gp_linkcap_free(struct gp_linkcap *L);

/* GB/s per NVLink, one way, of architecture arch (nvmlDeviceArchitecture_t; GP_GPU_UNKNOWN: from the
 * name, "NVIDIA H200" is Hopper), the signalling rate nvidia-smi nvlink -s shows: Pascal 20, Volta
 * and Turing 25.78, Ampere 25, Hopper 26.56, Blackwell 53.13; not known: the fastest (53.13). */
double gp_linkcap_nvlink_rate(int arch, const char *name);

/* The ceiling of bench row i of rows[0..n) (a pattern's aggregate: of its whole group), GB/s one way
 * summed over the links involved, with why (e.g. "18 NVLinks x 26.56 GB/s"); 0 when unknown (a
 * latency or within-GPU row, or a fact missing). */
double gp_linkcap_row(const struct gp_linkcap *L, const struct gp_bench_row *rows, int n, int i, char *why,
		      size_t len);

#endif
