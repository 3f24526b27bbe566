/* gpup2p copy / bench — what the two commands share: the CUDA session with each GPU's PCI facts,
 * and the printing of measurement rows in every format. */
#ifndef GPUP2P_CLI_XFER_H
#define GPUP2P_CLI_XFER_H

#include "cli.h"
#include "gpup2p/bench_plan.h"
#include "gpup2p/cuda.h"
#include "gpup2p/gpu.h"
#include "gpup2p/linkcap.h"

struct xfer_session {
	struct gp_cuda cuda;
	int *numa;                       /* each GPU's NUMA node from sysfs, -1 unknown (cuda.n of them) */
	int *gen, *width;                /* current PCIe link, 0 unknown */
	int pci_ok;                      /* the PCI model could be read */
	char driver[32];                 /* NVIDIA driver version (NVML), "" unknown */
	struct gp_gpu_facts *facts;      /* NVML's facts (heap), NULL when they could not be read */
};

/* Open CUDA (exit 69 when unavailable or no GPU, 2 on a CUDA error; printed) and read each GPU's NUMA
 * node and link from the PCI model of the root. Returns 0 or the exit code. */
int xfer_open(struct cli *c, struct xfer_session *s);

/* Close what xfer_open opened. */
void xfer_close(struct cli *c, struct xfer_session *s);

/* --factor's value: a sweep step above 1 and at most 1024; 0, or a usage message for cmd and -1. */
int xfer_factor_arg(const char *cmd, const char *val, double *v);

/* Print the rows in the chosen format (JSON: in the envelope, with the session header); rc is the exit
 * status the run ends with, -1 when the rows decide it (xfer_verdict's). */
void xfer_print(const struct cli *c, const struct xfer_session *s, const char *command,
		const struct gp_bench_row *rows, int n, int rc);

/* Each measured row's ceiling (linkcap.h) from the session's PCI model and facts. */
void xfer_ceilings(const struct cli *c, const struct xfer_session *s, struct gp_bench_row *rows, int n);

/* After the rows: one stderr line per failed verification and per figure above what its links carry
 * (a measurement error); returns 2 if any, 1 if a bandwidth fell below its floor (one line each),
 * else 0. */
int xfer_verdict(const struct cli *c, const struct gp_bench_row *rows, int n);

#endif
