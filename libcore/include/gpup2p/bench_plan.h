/* gpup2p — which measurements `gpup2p bench` makes: one row per path, memory kind, peer setting,
 * direction and size, in a stable order; rows that cannot be measured (no peer access) are kept
 * with the reason, so that machine formats show null rather than leave them out. Pure: no GPU. */
#ifndef GPUP2P_BENCH_PLAN_H
#define GPUP2P_BENCH_PLAN_H

#include "gpup2p/bench.h"
#include "gpup2p/xfer.h"

enum {
	GP_BENCH_H2D = 1, GP_BENCH_D2H = 2, GP_BENCH_P2P = 4, GP_BENCH_BIDIR = 8, GP_BENCH_LATENCY = 16,
	GP_BENCH_D2D = 32, GP_BENCH_ALL = 63,
	/* nvbandwidth-style patterns, copies running together (not in "all"): one GPU to every other, every
	 * GPU to one, every GPU to host, host to every GPU */
	GP_BENCH_ONE2ALL = 64, GP_BENCH_ALL2ONE = 128, GP_BENCH_ALL2HOST = 256, GP_BENCH_HOST2ALL = 512,
	GP_BENCH_PATTERNS = 960,
};

/* Who moves the data: the copy engines (cuMemcpy*), the SMs (a kernel, smcopy.h), or both. */
enum { GP_ENGINE_CE = 1, GP_ENGINE_SM = 2 };

/* Peer copies: pushed (queued on the source GPU) or pulled (on the destination). */
enum { GP_OP_WRITE = 1, GP_OP_READ = 2 };

/* Host memory kinds for h2d/d2h. */
enum { GP_MEM_PINNED = 1, GP_MEM_PAGEABLE = 2 };

struct gp_bench_opts {
	int modes;                      /* GP_BENCH_* bits */
	const int *gpus;                /* the GPUs to measure (indexes), in order (ngpus of them) */
	int ngpus;
	const uint64_t *sizes;          /* bandwidth sizes (nsizes of them, the caller's array) */
	int nsizes;
	uint64_t lat_size;              /* latency copy size */
	int iters, reps;                /* bandwidth batches */
	int lat_iters, lat_reps;        /* latency batches */
	int mem;                        /* GP_MEM_* bits */
	int peer;                       /* p2p/bidir rows: 1 peer access on only, 2 off only, 3 (or 0) both */
	int op;                         /* GP_OP_* bits for p2p, bidir, one2all, all2one; 0: p2p both, the
	                                   others write */
	int duplex;                     /* h2d, d2h, all2host, host2all: the opposite direction runs at the
	                                   same time on each GPU (spec.bidir), measured is the named one */
	int numa;                       /* host memory node for every row, -1: each GPU's own node */
	int no_verify;
	int engine;                     /* GP_ENGINE_* bits; 0 = copy engines. SM bandwidth rows: pinned host
	                                   memory and peer access only; SM latency rows: pointer chases */
	uint64_t chain_size;            /* SM latency: chain bytes; 0: twice the largest L2 cache of cuda's GPUs,
	                                   64 MiB at least (gp_sm_chain_default) */
	struct gp_cuda *cuda;           /* the session the chain default asks, may be NULL (then 0 is refused) */
	uint64_t chain_stride;          /* SM latency: bytes between slots */
	int chain_random;               /* SM latency: random slot order (from chain_seed) */
	uint64_t chain_seed;
	int chase_hops;                 /* SM latency: loads per batch (spread over the SMs) */
	const int *gpu_numa;            /* NUMA node of each GPU index (-1 unknown), may be NULL */
	int (*can_peer)(void *ctx, int a, int b); /* 1 direct access possible */
	void *ctx;
	uint64_t seed;
};

struct gp_bench_row {
	const char *mode;               /* "h2d", "d2h", "d2d", "p2p", "bidir", "latency" */
	const char *what;               /* latency: "h2d", "d2h" or "p2p" (SM: "host" or "p2p"); else = mode */
	struct gp_xfer_spec spec;
	const char *skip;               /* not measured: why; NULL when measured */
	struct gp_xfer_result res;      /* filled by the caller's run */
	int done;                       /* res holds a measurement */
	double floor;                   /* --min-bw for the row's mode, -1 none (pattern pairs: none) */
	int group;                      /* patterns: rows copied together share a group number (> 0); the
	                                   group's last row is its aggregate */
	int aggregate;                  /* the group's total: all bytes over the time the copies shared; its
	                                   spec has gpu or peer_gpu -1 for "all" */
	double ceiling;                 /* the most the links involved carry, GB/s (linkcap.h); 0 unknown */
	char ceiling_why[64];           /* how it was worked out ("18 NVLinks x 26.56 GB/s") */
};

/* Plan the rows. Order: per mode (h2d, d2h, d2d, p2p, bidir, latency, one2all, all2one, all2host,
 * host2all), then engine (copy engines, SMs),
 * then per GPU or pair, memory kind or peer setting and direction, then size. SM rows exist only where
 * SMs can copy (pinned host memory, peer access on). Returns the count (*rows malloc'ed), or
 * -EINVAL/-ENOMEM/-EIO (the chain default's CUDA call) with e filled. */
int gp_bench_plan(const struct gp_bench_opts *o, struct gp_bench_row **rows, struct gp_err *e);

/* Set each row's floor from the thresholds (pattern rows: the aggregate only). */
void gp_bench_floors(struct gp_bench_row *rows, int n, const struct gp_threshold *t, int nt);

/* 1 when a measured bandwidth row is below its floor. */
int gp_bench_below(const struct gp_bench_row *r);

/* 1 when a measured bandwidth row is above its ceiling by more than margin (a share: 0.10): the links
 * cannot carry it, the timing was wrong. */
int gp_bench_impossible(const struct gp_bench_row *r, double margin);

/* The mode names --min-bw accepts (NULL-terminated). */
extern const char *const gp_bench_threshold_modes[];

/* Run one pattern group, rows[0..n): the pair rows, then the aggregate. Every pair that is not skipped
 * gets its own stream and buffers; the batches of all pairs start together behind one gate, each timed
 * on its GPU's clock from the gate (gp_xfer_lanes_batch): a pair's figure is its bytes over the time
 * from the gate to its end, the aggregate all bytes over the longest pair's time. Every pair's data is
 * checked once, after the last timed batch. Fills each row's res and done. 0 or -errno (e filled). */
int gp_bench_pattern_run(struct gp_cuda *c, struct gp_bench_row *rows, int n, struct gp_err *e);

#endif
