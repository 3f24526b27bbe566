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
#define GP_GPU_FACTS_FORMAT 2     /* 2: NVLink error counters kept apart (1 stored their sum: ignored) */

/* What gp_gpu_facts_load and the NVML reads gather beyond identity, links and state. */
#define GP_GPU_HEALTH 1u          /* PCIe replay and NVLink error counters, read twice (doctor, snapshot) */

/* NVLink error counters (nvmlNvLinkErrorCounter_t), each summed over a GPU's active links. */
enum gp_nvl_counter {
	GP_NVL_REPLAY,            /* NVML_NVLINK_ERROR_DL_REPLAY: data link transmit replays */
	GP_NVL_RECOVERY,          /* NVML_NVLINK_ERROR_DL_RECOVERY: link recoveries (retraining) */
	GP_NVL_CRC_FLIT,          /* NVML_NVLINK_ERROR_DL_CRC_FLIT: flow-control digit CRC errors */
	GP_NVL_CRC_DATA,          /* NVML_NVLINK_ERROR_DL_CRC_DATA: data CRC errors (rise at idle on Hopper) */
	GP_NVL_COUNTERS
};
#define GP_GPU_ARCH_HOPPER 9      /* NVML_DEVICE_ARCH_HOPPER (nvmlDeviceGetArchitecture) */

/* A GPU's state and health as NVML reports it (libcore/gpu/state.c), recorded as numeric keys of its
 * gpu line. Each field: GP_GPU_UNKNOWN not known (NVML failed, or the snapshot's writer did not
 * record it), GP_GPU_NA not supported by this GPU (live NVML only), else the value. */
#define GP_GPU_UNKNOWN (-1)
#define GP_GPU_NA (-2)
struct gp_gpu_state {
	int persistence;              /* 1 persistence mode on */
	int mig;                      /* current MIG mode: 1 enabled */
	int virt;                     /* nvmlGpuVirtualizationMode_t: 0 none, 1 pass-through, 2 vGPU guest,
	                                 3 host vGPU, 4 host vSGA */
	int compute;                  /* nvmlComputeMode_t: 0 default, 1 exclusive thread, 2 prohibited,
	                                 3 exclusive process */
	int retired_pending;          /* 1: ECC page retirement waits for a GPU reset (before Ampere) */
	int remap_pending;            /* 1: a row remapping waits for a GPU reset (Ampere and later) */
	int remap_failed;             /* 1: a row remapping has failed */
	long long replay;             /* PCIe replay counter (since the driver loaded) */
	long long replay_rise;        /* its rise between two reads */
	int nvl_active, nvl_inactive; /* NVLinks up, and supported but down */
	long long nvl_err[GP_NVL_COUNTERS];      /* each NVLink error counter, summed over the active links;
	                                           only those gp_gpu_nvl_counter_counts for arch are read */
	long long nvl_err_rise[GP_NVL_COUNTERS]; /* their rise between two reads */
	int arch;                     /* nvmlDeviceArchitecture_t: 7 Ampere, 8 Ada, 9 Hopper, 10 Blackwell */
	int numa_id;                  /* NUMA node of the GPU's own memory (nvmlDeviceGetNumaNodeId: coherent
	                                 NVLink-C2C); GP_GPU_NA for PCIe-attached memory */
	int fabric;                   /* nvmlGpuFabricState_t: 0 not supported, 1 not started, 2 in progress,
	                                 3 completed */
	int fabric_status;            /* the fabric's nvmlReturn_t once completed: 0 success */
	long long ecc_unc_volatile;   /* uncorrected ECC errors since the driver loaded (volatile count) */
	long long clk_reasons;        /* why the clocks are below their maximum now: the GP_CLK_* bits of
	                                 nvmlDeviceGetCurrentClocksEventReasons (ThrottleReasons before R535) */
	long long bar1_total;         /* BAR1 bytes (nvmlDeviceGetBAR1MemoryInfo): live NVML only, never */
	long long bar1_used;          /* recorded (usage changes with every process); in use now */
};

/* Clock event reasons (NVML's nvmlClocksEventReason* bits, formerly nvmlClocksThrottleReason*). */
#define GP_CLK_IDLE            0x001ULL  /* nothing to run: clocks at idle */
#define GP_CLK_APP_SETTING     0x002ULL  /* application clocks set below the maximum (nvidia-smi -ac) */
#define GP_CLK_SW_POWER_CAP    0x004ULL  /* the power limit holds the clocks (normal at full load) */
#define GP_CLK_HW_SLOWDOWN     0x008ULL  /* hardware slowdown: clocks halved or worse (thermal, power
                                            brake, or the board's slowdown signal) */
#define GP_CLK_SYNC_BOOST      0x010ULL  /* held to the slowest GPU of a sync-boost group */
#define GP_CLK_SW_THERMAL      0x020ULL  /* the driver slows the GPU: above its maximum operating temperature */
#define GP_CLK_HW_THERMAL      0x040ULL  /* hardware thermal slowdown: temperature too high */
#define GP_CLK_HW_POWER_BRAKE  0x080ULL  /* power brake: an external signal (PSU, BMC) asks for less power */
#define GP_CLK_DISPLAY         0x100ULL  /* display clock setting */

struct gp_gpu_info {
	char bdf[GP_BDF_LEN];
	char name[96];
	uint64_t vram;            /* bytes of framebuffer memory, 0 unknown */
	uint64_t bar1;            /* bytes of BAR1 as the driver reports it, 0 unknown */
	uint64_t bar1_free;       /* bytes of BAR1 free now (live NVML only; not recorded) */
	int switch_links;         /* active NVLinks to an NVSwitch */
	long long nvl_down_mask;  /* bit l: link l is not active though NVML reports it present (P2P
	                             capability, or the remote end's PCI address); -1 not recorded */
	int nvl_peer_down;        /* links another GPU has up towards this one beyond this GPU's own
	                             active links to it (those are down on this end); -1 not recorded */
	struct gp_gpu_state st;   /* state and health (NVML) */
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
	double counted_at;        /* live: when the counters were first read (gp_clock_s), else 0 */
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
	double counted_at;        /* when the first GPU's counters were read (gp_clock_s) */
};

/* Load the facts: NVML when the root is live (flags: GP_GPU_HEALTH to read the counters too), the
 * recorded file otherwise. Missing NVML or file is not an error (available = 0, why says what);
 * a malformed file is GP_E_DATA naming the line. */
int gp_gpu_facts_load(const struct gp_root *r, struct gp_gpu_facts *f, unsigned flags, struct gp_err *e);

/* Query libnvidia-ml.so.1 (dlopen) and make facts of the answers (gp_gpu_nvml_query, then
 * gp_gpu_facts_from_nvml). Not an error when it is absent: available = 0. More than GP_GPU_MAX
 * GPUs: GP_E_DATA saying so (never a silent cut). */
int gp_gpu_nvml_read(struct gp_gpu_facts *f, unsigned flags, struct gp_err *e);

/* Open one NVML session for the process (dlopen and nvmlInit once): until gp_gpu_nvml_close the
 * queries below use it instead of initialising and shutting NVML down themselves. Measured on 2x H200
 * (580.159.04): nvmlInit and nvmlShutdown wait for a cuInit running on another thread (415-422 ms),
 * while the queries between them do not; doctor opens the session before it starts cuInit on its
 * thread and closes it after. 0, or -1 when NVML cannot be had (the queries then say why). Not
 * thread-safe: call from one thread, before any other asks NVML. */
int gp_gpu_nvml_open(void);

/* Shut the session down (nvmlShutdown, dlclose); nothing when none is open. */
void gp_gpu_nvml_close(void);

/* Ask libnvidia-ml.so.1 (dlopen) about each GPU and its active NVLinks, one thread per GPU; the
 * counters (GP_GPU_HEALTH) only then. Not an error when it is absent: available = 0 and why says
 * what. Returns 0, or -E2BIG (why says so, nothing read) when NVML reports more than GP_GPU_MAX GPUs. */
int gp_gpu_nvml_query(struct gp_gpu_nvml *raw, unsigned flags);

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

/* Every field of a GPU state unknown (GP_GPU_UNKNOWN). */
void gp_gpu_state_init(struct gp_gpu_state *s);

/* Take key=v of a recorded gpu line into s: 1 when key is a state field, 0 when it is not. */
int gp_gpu_state_key(struct gp_gpu_state *s, const char *key, uint64_t v);

/* Write the known fields of s as " key=v", and those not supported as " na=MASK" (what
 * gp_gpu_state_key reads back). */
void gp_gpu_state_write(const struct gp_gpu_state *s, FILE *out);

/* Ask NVML (lib: the dlopen'ed libnvidia-ml, dev: an nvmlDevice_t) for a GPU's state; entry points the
 * library lacks or calls the GPU does not support leave GP_GPU_NA. With GP_GPU_HEALTH the counters are
 * read once (rises 0; NVLink ones of active links only, those the architecture counts):
 * gp_gpu_nvml_recount reads them again. Without, they stay GP_GPU_UNKNOWN. */
void gp_gpu_nvml_state(void *lib, void *dev, unsigned flags, struct gp_gpu_state *s);

/* The GPU's clock event reasons now (GP_CLK_* bits; lib, dev as for gp_gpu_nvml_state), GP_GPU_NA when
 * the library or GPU does not report them, GP_GPU_UNKNOWN when the call failed. */
long long gp_gpu_nvml_clk_reasons(void *lib, void *dev);

/* Run job(arg) while a thread of its own samples GPU bdf every GP_GPU_SAMPLE_NS: its clock event reasons
 * (NVML), ORed into *reasons (GP_GPU_NA when NVML does not report them, GP_GPU_UNKNOWN when it could not
 * be asked about this GPU), and tick(arg) (NULL: none) beside; at least one sample, the last after the
 * job returned. *samples counts them. Returns what job returned. */
#define GP_GPU_SAMPLE_NS 2000000L
int gp_gpu_nvml_during(const char *bdf, int (*job)(void *), void (*tick)(void *), void *arg, long long *reasons,
		       int *samples);

/* 1 when a rise of NVLink counter k is a link error on architecture arch (GP_GPU_UNKNOWN: not known), as
 * nvidia-smi nvlink -e counts them: replay, recovery and CRC flit on every GPU; CRC data only before
 * Hopper (from Hopper on it rises at idle, corrected by replay, and nvidia-smi no longer shows it). */
int gp_gpu_nvl_counter_counts(int arch, int k);

/* The name of NVLink counter k as nvidia-smi nvlink -e words it ("replay", "recovery", "CRC flit",
 * "CRC data"). */
const char *gp_gpu_nvl_counter_name(int k);

/* Read the PCIe replay and NVLink error counters of s (filled by gp_gpu_nvml_state) again: the rises
 * count from gp_gpu_nvml_state's read; a counter unreadable now keeps its last value and rise. The
 * NVLink counters are read again only when one of them counted an error at the first read, or always
 * with from_zero (after traffic, doctor --active): on Hopper a read costs ~15 ms a GPU (18 links, all
 * serialised with cuInit in the driver), and a link with no error in its life has nothing to rise from
 * but the seconds between the reads. */
void gp_gpu_nvml_recount(void *lib, void *dev, struct gp_gpu_state *s, int from_zero);

/* Live facts: read every GPU's counters again into st[i] (a copy of f->gpus[i].st first), once at
 * least window_s seconds have passed since f->counted_at (the pause is what is left of it, at most
 * window_s). 0, or -ENOENT when NVML cannot be asked (st keeps the facts' values). */
int gp_gpu_nvml_recount_facts(const struct gp_gpu_facts *f, struct gp_gpu_state *st, double window_s);

/* The pause gp_gpu_nvml_recount_facts takes at time now (seconds, monotonic) for counters read at
 * counted_at: what is left of window_s, between 0 and window_s. */
double gp_gpu_nvml_pause_s(double counted_at, double window_s, double now);

/* Add (or increase) a link count between two GPUs. 0 or -ENOSPC. */
int gp_gpu_add_link(struct gp_gpu_facts *f, const char *a, const char *b, int count);

#endif
