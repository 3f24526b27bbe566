/* gpup2p — facts only the NVIDIA driver knows (VRAM, BAR1, NVLink peers,
 * driver version). Live: read from libnvidia-ml.so.1 loaded with dlopen.
 * Under --root: replayed from ROOT/gpup2p/gpu-facts, the file `gpup2p snapshot`
 * records, so that a replay prints what the live run printed. */
#ifndef GPUP2P_GPU_H
#define GPUP2P_GPU_H

#include <stdint.h>
#include <stdio.h>

#include "gpup2p/err.h"
#include "gpup2p/pci.h"
#include "gpup2p/root.h"

#define GP_GPU_MAX 64
#define GP_GPU_LINKS_MAX 2048
#define GP_GPU_NVLINKS_MAX 64     /* most NVLinks a recorded pair may have (NVML has 18 per GPU today) */
#define GP_GPU_FACTS_PATH "/gpup2p/gpu-facts"

struct gp_gpu_info {
	char bdf[GP_BDF_LEN];
	char name[96];
	uint64_t vram;            /* bytes of framebuffer memory, 0 unknown */
	uint64_t bar1;            /* bytes of BAR1 as the driver reports it, 0 unknown */
	uint64_t bar1_free;       /* bytes of BAR1 free now (live NVML only; not recorded) */
	int switch_links;         /* active NVLinks to an NVSwitch */
};

struct gp_gpu_link {
	char a[GP_BDF_LEN], b[GP_BDF_LEN];
	int count;                /* active NVLinks between the two GPUs */
};

struct gp_gpu_facts {
	int available;            /* 1 when NVML (live or recorded) answered */
	char why[256];            /* why not, when available == 0 */
	char driver[32];
	int n;
	struct gp_gpu_info gpus[GP_GPU_MAX];
	int nlinks;
	struct gp_gpu_link links[GP_GPU_LINKS_MAX];
};

#define GP_GPU_LINKS_PER_GPU 18 /* NVLinks of one GPU NVML reports (NVML_NVLINK_MAX_LINKS) */

/* What is at the other end of an NVLink (NVML's nvmlIntNvLinkDeviceType_t values). */
enum gp_nvlink_remote {
	GP_NVLINK_REMOTE_UNKNOWN = -1,  /* the driver does not say (older NVML) */
	GP_NVLINK_REMOTE_GPU = 0,
	GP_NVLINK_REMOTE_NPU = 1,
	GP_NVLINK_REMOTE_SWITCH = 2,
};

/* One GPU as NVML reports it, its active NVLinks not yet paired with their peers. */
struct gp_gpu_nvml_gpu {
	struct gp_gpu_info info;
	int nlinks;                       /* active NVLinks */
	struct {
		char remote[GP_BDF_LEN];  /* the remote end's PCI address, "" unknown */
		enum gp_nvlink_remote type;
	} links[GP_GPU_LINKS_PER_GPU];
};

/* What gp_gpu_nvml_query gathers; gp_gpu_facts_from_nvml turns it into facts. */
struct gp_gpu_nvml {
	int available;            /* 1 when NVML answered */
	char why[256];            /* why not */
	char driver[32];
	int n;
	struct gp_gpu_nvml_gpu gpus[GP_GPU_MAX];
};

/* Load the facts: NVML when the root is live, the recorded file otherwise.
 * Missing NVML or file is not an error (available = 0, why says what);
 * a malformed file is GP_E_DATA naming the line. */
int gp_gpu_facts_load(const struct gp_root *r, struct gp_gpu_facts *f, struct gp_err *e);

/* Query libnvidia-ml.so.1 (dlopen) and make facts of the answers (gp_gpu_nvml_query, then
 * gp_gpu_facts_from_nvml). Not an error when it is absent: available = 0. */
int gp_gpu_nvml_read(struct gp_gpu_facts *f, struct gp_err *e);

/* Ask libnvidia-ml.so.1 (dlopen) about each GPU and its active NVLinks. Not an error when it is
 * absent: available = 0 and why says what. Returns 0. */
int gp_gpu_nvml_query(struct gp_gpu_nvml *raw);

/* Facts from what NVML reported: a direct NVLink counts for its GPU pair; GPUs that both have links
 * to NVSwitches are joined by the smaller of their switch link counts (nvidia-smi's NV# there). */
void gp_gpu_facts_from_nvml(const struct gp_gpu_nvml *raw, struct gp_gpu_facts *f);

/* Parse the recorded format from a stream; `name` is used in error messages. One line per GPU and
 * per GPU pair (its whole NVLink bond): a repeated GPU or pair is GP_E_DATA. */
int gp_gpu_facts_parse(FILE *in, const char *name, struct gp_gpu_facts *f, struct gp_err *e);

/* Write the facts in the recorded format (what snapshot stores). */
int gp_gpu_facts_write(const struct gp_gpu_facts *f, FILE *out);

/* NVLinks between two GPUs (direct or through NVSwitch): count, 0 none, -1 not known. */
int gp_gpu_nvlinks(const struct gp_gpu_facts *f, const char *bdf_a, const char *bdf_b);

/* The facts for one GPU, or NULL. */
const struct gp_gpu_info *gp_gpu_find(const struct gp_gpu_facts *f, const char *bdf);

/* Add (or increase) a link count between two GPUs. 0 or -ENOSPC. */
int gp_gpu_add_link(struct gp_gpu_facts *f, const char *a, const char *b, int count);

#endif
