/* gpup2p — doctor: a registry of checks that turn what the other modules loaded (PCI model,
 * topology, ACS audit, BARs, IOMMU, GPU facts) and a few system files into findings: data with an
 * id, a severity, a subject, the BDFs involved, a message, a fix and the evidence. Checks never
 * print. Where a check's source is missing it says "unknown" (with why) or "skipped" (does not
 * apply here), never "ok". See ../shared/notes/doctor-checks.md for the checks and the contract. */
#ifndef GPUP2P_DOCTOR_H
#define GPUP2P_DOCTOR_H

#include <stdio.h>
#include <stdint.h>

#include "gpup2p/acs.h"
#include "gpup2p/bar.h"
#include "gpup2p/err.h"
#include "gpup2p/expect.h"
#include "gpup2p/gpu.h"
#include "gpup2p/iommu.h"
#include "gpup2p/pci.h"
#include "gpup2p/root.h"
#include "gpup2p/snapshot.h"
#include "gpup2p/topo.h"

/* Severity, in the order the summary counts them. */
enum gp_sev { GP_SEV_ERROR = 0, GP_SEV_WARNING, GP_SEV_INFO, GP_SEV_OK, GP_SEV_UNKNOWN, GP_SEV_SKIPPED };
#define GP_SEV_N 6

/* What a check reads (flags). Offline (--root) the live-only ones are not there. */
#define GP_SRC_SYSFS   0x001u  /* /sys/bus/pci/devices/BDF/..., /sys/kernel/iommu_groups */
#define GP_SRC_CFG     0x002u  /* config space (libpci) */
#define GP_SRC_PROC    0x004u  /* /proc files (modules, driver/nvidia, cmdline, sys/) */
#define GP_SRC_NVML    0x008u  /* libnvidia-ml live, or its recorded facts */
#define GP_SRC_CUDA    0x010u  /* libcuda, live only */
#define GP_SRC_VERBS   0x020u  /* libibverbs, live only */
#define GP_SRC_DEV     0x040u  /* device nodes under /dev */
#define GP_SRC_PROCESS 0x080u  /* this process's limits and mounts (getrlimit, statvfs), live or as a
                                  snapshot recorded those of the process that captured it */
#define GP_SRC_KMSG    0x100u  /* the kernel log (/dev/kmsg): read only with --kmsg */
#define GP_SRC_LIVE_ONLY (GP_SRC_CUDA | GP_SRC_VERBS)
/* Sources a check asks only where they can answer (live; libcuda not under --no-cuda): never a reason
 * to skip it, nor to load libcuda early (gp_doctor_wants); without them it says what it could not
 * learn. GP_SRC_OPTIONAL(mask): those of a mask. */
#define GP_SRC_OPT(src)  ((src) << 16)
#define GP_SRC_OPTIONAL(mask) (((mask) >> 16) & 0xffffu)

struct gp_doctor_ctx;
struct gp_doctor_check;
struct gp_cuda_probe;
struct gp_doctor_p2p;
struct gp_verbs_probe;

/* One entry of the registry. A family file exports a table of these. */
struct gp_doctor_check {
	const char *id;          /* "family.name", stable */
	const char *title;       /* one line: what it looks for */
	unsigned sources;        /* GP_SRC_* it reads: without one (--no-cuda, offline for a live-only source) it
	                            is skipped; and GP_SRC_OPT(GP_SRC_*) it also asks where they can answer */
	int active;              /* 1: moves data, runs only with --active */
	void (*run)(struct gp_doctor_ctx *c);
	const char *explain;     /* what it reads, when it alarms, why it matters, the fix */
};

struct gp_doctor_family {
	const char *name;        /* "driver" */
	const char *title;
	const struct gp_doctor_check *checks;
	int n;
	/* frees what the family's checks kept in the context (gp_doctor_ctx_free calls it), or NULL */
	void (*cleanup)(struct gp_doctor_ctx *c);
};

struct gp_kv {
	char *key, *value;
};

/* A measured figure a finding carries as a number (doctor --prometheus prints it): a copy's rate
 * from src to dst, topology indices (GPUs first), -1 for host memory. */
struct gp_figure {
	int src, dst;
	double bytes_per_s;
};

struct gp_findings_mem; /* doctor/finding.c: the findings' texts and arrays (gpup2p/arena.h) */

struct gp_finding {
	const struct gp_doctor_check *check;
	char *subject;           /* "0000:13:00.0", "nvidia", "system" */
	char *message;
	char *fix;               /* NULL: nothing to do */
	char (*bdf)[GP_BDF_LEN];
	struct gp_kv *ev;        /* evidence: file or register, and the value seen */
	struct gp_figure *fig;   /* measured figures (p2p.bandwidth), nfig of them */
	struct gp_findings_mem *mem; /* its list's: where the texts, bdf and ev above live */
	enum gp_sev sev;
	int nbdf, nev, nfig;
	int capbdf, capev;       /* bdf and ev hold this many (their arrays grow in mem) */
};

struct gp_findings {
	struct gp_finding *v;
	int n, cap;
	int nomem;               /* an allocation failed: the list is incomplete */
	struct gp_findings_mem *mem; /* its findings' texts and arrays, freed with it (NULL: none yet) */
};

/* Where the facts came from, for the header of the report. */
struct gp_doctor_sources {
	int live;                /* 1 live system, 0 a root directory (snapshot, fixture) */
	int nvml;                /* NVML facts (live or recorded) available */
	char nvml_why[256];
	int cuda;                /* libcuda loaded (driver.cuda_init, live only) */
	char cuda_why[128];
	int snapshot;            /* 1 when the root is a snapshot and snap holds its marker */
	struct gp_snapshot_info snap;
};

/* A few /proc and /sys facts no other module owns, read once on first use (doctor/sys.c). */
struct gp_doctor_sys;

/* Process facts: live, or as a snapshot's marker recorded those of the capturing process (recorded
 * set; an older snapshot records none); tests may set them by hand. */
struct gp_doctor_proc {
	int known;               /* 1 when memlock is filled */
	uint64_t memlock;        /* RLIMIT_MEMLOCK soft limit, UINT64_MAX unlimited */
	int shm_known;
	uint64_t shm_size;       /* bytes of /dev/shm */
	int euid;                /* -1 unknown (a snapshot) */
	int recorded;            /* 1 the facts are a snapshot's record, not this process's */
	int container;           /* recorded: 1 captured inside a container, 0 not, -1 unknown */
	char container_why[64];
};

struct gp_doctor_pre;
struct gp_doctor_ibc;
struct gp_doctor_ib;

struct gp_doctor_ctx {
	const struct gp_root *root;
	const struct gp_pci *pci;
	const struct gp_gpu_facts *facts;
	const struct gp_topo *topo;
	struct gp_iommu iommu;
	struct gp_acs_audit acs;
	int acs_ok;                  /* the audit ran */
	struct gp_bar_report *bar;   /* per topology entry (GPUs, then NICs): gp_bar_report */
	struct gp_doctor_sources src;
	struct gp_doctor_proc proc;
	struct gp_doctor_sys *sys;   /* lazily loaded system files */
	struct gp_cuda_probe *cuda_probe; /* libcuda's cuInit, probed on first use (live only) */
	struct gp_verbs_probe *verbs_probe; /* libibverbs' device list, probed on first use (live only) */
	int active;                  /* --active given */
	int no_cuda;                 /* --no-cuda given: libcuda is never loaded, its checks are skipped */
	struct gp_doctor_p2p *p2p;   /* the p2p checks' CUDA session and answers (doctor/p2p.c) */
	void (*progress)(void *arg, const char *what); /* active checks: what is being copied now (NULL: quiet) */
	void *progress_arg;
	int kmsg;                    /* --kmsg given: gpu.xid may read the kernel log */
	struct gp_doctor_pre *pre;   /* slow sources started early (gp_doctor_prefetch), or NULL; the
	                                context joins and frees it */
	int cuda_wanted;             /* a selected check reads libcuda (set by gp_doctor_run): without one,
	                                nothing loads libcuda (driver.version does not probe it either) */
	int probe_libs;              /* ask libcuda/libibverbs: live; tests set it on a fixture (their test doubles) */
	struct gp_gpu_state *counters; /* --active: the GPUs' counters read again (gp_doctor_counters), or NULL */
	int counters_read;           /* gp_doctor_counters asked NVML (answer or not) */
	const struct gp_expect *expect; /* --expect FILE: what this node should have (expect.*), or NULL */
	struct gp_expect *expect_have; /* this node's facts, gathered by the expect checks on first use */
	struct gp_doctor_ib *ib;     /* the RDMA devices and their ports, read on first use (doctor/rdma_facts.c) */
	struct gp_doctor_ibc *ib_counters; /* rdma.errors, rdma.flaps: every RDMA port's counters, read on first use */
	void (*counter_pause)(struct gp_doctor_ctx *c, double s); /* between those reads (live): NULL sleeps s;
	                                a test's double (which makes a fixture read twice too) changes the files */
	struct gp_findings out;
	const struct gp_doctor_check *cur;
	double *check_ms;            /* gp_doctor_run: each check's wall time (ms) by registry index, or NULL */
};

/* The registry: every family, in report order. */
extern const struct gp_doctor_family *const gp_doctor_families[];
extern const int gp_doctor_nfamilies;

/* Number of checks in the registry, and the i-th in family order. */
int gp_doctor_count(void);
const struct gp_doctor_check *gp_doctor_at(int i);

/* The check with this id, or NULL. */
const struct gp_doctor_check *gp_doctor_find(const char *id);

/* The family named name (or of check id "name.x"), or NULL. */
const struct gp_doctor_family *gp_doctor_family(const char *name);

/* Names of the sources in a mask, comma separated ("proc,sysfs"). Returns buf. */
const char *gp_doctor_sources_str(unsigned mask, char *buf, size_t n);

/* A check's sources for --list and --explain: its sources, then its optional ones marked '?'
 * ("proc,sysfs,cuda?,verbs?"). Returns buf. */
const char *gp_doctor_check_sources(const struct gp_doctor_check *k, char *buf, size_t n);

/* Severity names as in JSON: "error", "warning", "info", "ok", "unknown", "skipped". */
const char *gp_sev_name(enum gp_sev s);

/* Pick checks: on[i] for gp_doctor_at(i). only/skip are comma lists of families, "family.*" or
 * ids (NULL: all / none). An unknown name is GP_E_USAGE naming it. */
int gp_doctor_select(unsigned char *on, const char *only, const char *skip, struct gp_err *e);

/* Set up a context from what the command loaded (facts and topo may not be NULL); reads the IOMMU
 * state, audits ACS and builds the BAR report of each GPU and NIC. Free with gp_doctor_ctx_free.
 * 0 or -ENOMEM. */
int gp_doctor_ctx_init(struct gp_doctor_ctx *c, const struct gp_root *r, const struct gp_pci *p,
		       const struct gp_gpu_facts *f, const struct gp_topo *t, struct gp_err *e);

/* Start the slow live sources a selected check will read (on may be NULL: all; active: the active
 * checks run too; no_cuda: --no-cuda, libcuda is not wanted) on threads, before the PCI scan: libcuda's probe (dlopen, cuInit, no context) and the
 * /proc/kallsyms scan of kmod.nv_p2p_api. NULL under --root, when nothing is wanted, or without memory
 * (the checks then read their sources themselves). Hand it to the context (c->pre) after
 * gp_doctor_ctx_init, which joins and frees it; or release it with gp_doctor_prefetch_free. */
struct gp_doctor_pre *gp_doctor_prefetch(const struct gp_root *r, const unsigned char *on, int active,
					 int no_cuda);

/* How long each prefetch thread ran (ms), once a check joined it; -1: not run or not joined yet. */
void gp_doctor_prefetch_ms(const struct gp_doctor_pre *p, double *cuda_ms, double *sym_ms);

/* Wait for the prefetch threads still running and free p (NULL is fine). */
void gp_doctor_prefetch_free(struct gp_doctor_pre *p);

/* Fill c->proc from this process (live roots only). */
void gp_doctor_proc_read(struct gp_doctor_ctx *c);

/* What this node has, in the terms of --expect (gpup2p/expect.h): every GPU and NIC (virtual
 * functions left out) with its GPU model (NVML), PCIe link generation and width, NVLinks up (NVML),
 * NUMA node and NIC port rate; -1 or "" where not known. doctor --json carries it ("facts"). Free x
 * with gp_expect_free. 0 or -ENOMEM. */
int gp_doctor_node_facts(struct gp_doctor_ctx *c, struct gp_expect *x);

/* Release the context and its findings. */
void gp_doctor_ctx_free(struct gp_doctor_ctx *c);

/* Run the selected checks (on may be NULL: all), appending findings. Active checks without
 * c->active and live-only checks on an offline root become "skipped". 0 or -ENOMEM. */
int gp_doctor_run(struct gp_doctor_ctx *c, const unsigned char *on, struct gp_err *e);

/* Count the findings per severity into sum[GP_SEV_N]. */
void gp_doctor_summary(const struct gp_findings *f, int sum[GP_SEV_N]);

/* The exit code for a summary: 2 an error, 1 a warning (or, strict, an unknown), else 0. */
int gp_doctor_exit_code(const int sum[GP_SEV_N], int strict);

/* The host's name: /proc/sys/kernel/hostname under the root, NULL when not there. */
const char *gp_doctor_host(struct gp_doctor_ctx *c);

/* This boot's id: /proc/sys/kernel/random/boot_id under the root (a snapshot records it), NULL when
 * not there or not a UUID. */
const char *gp_doctor_boot_id(struct gp_doctor_ctx *c);

/* Topology GPU i's UUID ("GPU-…") from "GPU UUID:" in /proc/driver/nvidia/gpus/BDF/information,
 * copied into buf; NULL when not there (or longer than n - 1). */
const char *gp_doctor_gpu_uuid(struct gp_doctor_ctx *c, int i, char *buf, size_t n);

/* Which findings fit in budget bytes when finding i takes size[i]: keep[i] = 1 for those kept.
 * Errors go first, then warnings, unknown, info, ok, skipped; within a severity, report order.
 * Returns how many were left out. */
int gp_doctor_fit(const struct gp_findings *f, const size_t *size, size_t budget, unsigned char *keep);

/* How a size-bound document is rendered (doctor --json): doc() renders it with the findings keep[i]
 * (all when keep is NULL) and left counted as left out, into a malloc'd buffer of *len bytes (NULL:
 * out of memory); finding() says how many bytes finding i adds to it (0: out of memory). */
struct gp_doctor_render {
	char *(*doc)(void *arg, const unsigned char *keep, int left, size_t *len);
	size_t (*finding)(void *arg, int i);
	void *arg;
};

/* The document under max bytes: whole when it fits, else the most urgent findings that fit
 * (gp_doctor_fit), *left counting those left out (none kept when not even one fits). The malloc'd
 * document of *len bytes, NULL when out of memory. */
char *gp_doctor_fit_doc(const struct gp_findings *f, size_t max, const struct gp_doctor_render *r, size_t *len,
			int *left);

/* The alarm that sets a run's state: the first error, else the first warning, else the first
 * unknown; its index in f, or -1 when there is none. */
int gp_doctor_first_alarm(const struct gp_findings *f);

/* Nagios' code for doctor's exit status rc: 0, 1 and 2 as they are, anything else 3 (UNKNOWN). */
int gp_doctor_nagios_code(int rc);

/* A finished run as --nagios sees it. out and sum (GP_SEV_N counts) are NULL when the run failed:
 * why (may be NULL or "") then says why. host may be NULL. */
struct gp_doctor_nagios_run {
	const struct gp_findings *out;
	const int *sum;
	int rc;
	const char *host, *why;
	double seconds;
	int strict;             /* --strict: unknown findings warn (the perfdata's threshold) */
};

/* Write the Nagios status line with perfdata to f: the summary and the first alarm, or why the run
 * failed. Returns the Nagios code (gp_doctor_nagios_code). */
int gp_doctor_nagios(FILE *f, const struct gp_doctor_nagios_run *r);

#endif
