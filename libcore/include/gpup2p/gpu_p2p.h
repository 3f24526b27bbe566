/* gpup2p — NVML's own view of P2P between GPU pairs (nvmlDeviceGetP2PStatus: read, write, NVLink,
 * atomics), asked live from libnvidia-ml.so.1 (or the library GPUP2P_LIBNVML names: a test double).
 * Not recorded in snapshots: doctor compares it with libcuda's answer, which is live only as well. */
#ifndef GPUP2P_GPU_P2P_H
#define GPUP2P_GPU_P2P_H

#include "gpup2p/gpu.h"

/* NVML's capability indices (nvmlGpuP2PCapsIndex_t) that gpup2p asks about. */
enum gp_p2p_cap { GP_P2P_READ = 0, GP_P2P_WRITE = 1, GP_P2P_NVLINK = 2, GP_P2P_ATOMICS = 3 };
#define GP_P2P_NCAPS 4
#define GP_P2P_OK 0              /* NVML_P2P_STATUS_OK; other values: gp_gpu_p2p_status_name */
#define GP_P2P_FAILED (-1)       /* the call failed (or NVML has no handle for a GPU) */

struct gp_gpu_p2p {
	int available;           /* 1 when NVML answered */
	char why[256];           /* why not */
	int n;                   /* GPUs asked about, in the caller's order */
	signed char st[GP_GPU_MAX][GP_GPU_MAX][GP_P2P_NCAPS]; /* [from][to][cap]: status or GP_P2P_FAILED;
	                                                        symmetric */
};

/* Ask NVML for the P2P status of every pair of the n GPUs named by bdf (n <= GP_GPU_MAX): one call per
 * unordered pair and capability, the answer stored both ways (st[i][j] = st[j][i]: the driver answers
 * for the pair). Never fails: without NVML, available = 0 and why says what. */
void gp_gpu_p2p_query(const char (*bdf)[GP_BDF_LEN], int n, struct gp_gpu_p2p *p);

/* NVML's name of a status, in words: "OK", "chipset not supported", ... ("call failed" for -1). */
const char *gp_gpu_p2p_status_name(int st);

/* "read", "write", "nvlink", "atomics". */
const char *gp_gpu_p2p_cap_name(int cap);

#endif
