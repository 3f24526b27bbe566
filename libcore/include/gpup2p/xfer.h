/* gpup2p — one measured, verified copy path over CUDA: host→GPU, GPU→host, within a GPU, or between
 * two GPUs (peer access on or off, push or pull, one direction or both at once).
 *
 * A timed batch is `iters` copies queued behind a gate (the stream waits on a word in mapped pinned
 * host memory that the host sets once everything is queued), between two events: launch overhead is
 * not measured. Pageable host memory and peer copies without peer access are not gated (the driver
 * may block the queueing thread until such a copy has run); a watchdog opens the gate after 5 s
 * anyway, so that a driver that blocks elsewhere costs time, never a hang.
 * The destination holds a different pattern before the copies, and is checked byte by byte after,
 * where it is (smcopy.h's pattern kernels; pageable host memory by the CPU): batch mode once after the
 * last timed batch, so that verified batches run back to back as unverified ones; `each` after every
 * copy. */
#ifndef GPUP2P_XFER_H
#define GPUP2P_XFER_H

#include "gpup2p/bench.h"
#include "gpup2p/cuda.h"

enum gp_xfer_kind { GP_XFER_H2D, GP_XFER_D2H, GP_XFER_D2D, GP_XFER_PEER };

struct gp_xfer_spec {
	enum gp_xfer_kind kind;
	int gpu;                   /* the GPU (H2D/D2H/D2D); PEER: the source */
	int peer_gpu;              /* PEER: the destination */
	int pinned;                /* H2D/D2H: host memory page-locked (else pageable) */
	int p2p;                   /* PEER: 1 peer access enabled, 0 disabled (the driver stages copies) */
	int read;                  /* PEER: queued on the destination GPU (pull) instead of the source (push) */
	int bidir;                 /* PEER: the reverse copy at the same time, queued on the other GPU;
	                              H2D/D2H: duplex, the reverse copy on the same GPU at the same time,
	                              twice as many copies, not counted (nvbandwidth's bidirectional) */
	uint64_t size;
	int iters;                 /* copies per timed batch (per checked copy when `each`) */
	int reps;                  /* timed batches */
	int numa;                  /* NUMA node for host memory and this thread, -1 leave as is */
	int each;                  /* a new pattern for every copy, checked after each (gpup2p copy); else one
	                              pattern, checked once after the timed batches */
	int host_timing;           /* also time copy+wait per copy with the host clock (latency) */
	int no_verify;             /* skip the byte check (verified stays -1) */
	int via_map;               /* copy --via map: done by pinmap through a gpup2p.ko mapping, not here */
	int sm;                    /* copies by a kernel on the queueing GPU's SMs (smcopy.h), not its copy
	                              engines: host memory must be pinned, peer copies need peer access */
	int chase;                 /* pointer-chase latency (smcopy.h): GPU `gpu` follows a chain of `size`
	                              bytes in pinned host memory (H2D) or in peer_gpu's memory (PEER),
	                              `reps` batches of `iters` loads, each spread evenly over the
	                              GPU's SMs (smchase.c) */
	uint64_t stride;           /* chase: bytes between chain slots */
	int random;                /* chase: slots in a random order drawn from seed (else address order) */
	uint64_t seed;
};

struct gp_xfer_result {
	struct gp_stats gbps;      /* per batch (per copy when `each`), GB/s = 1e9 B/s */
	struct gp_stats us;        /* per copy, microseconds (chase: per load) */
	double host_us;            /* host_timing: mean time of one copy + wait, microseconds */
	int verified;              /* 1 every byte as sent, 0 a mismatch (below), -1 not checked */
	int64_t bad_offset;
	uint8_t want, got;
	int bad_copy;              /* which copy (`each`), else the last timed batch (its copies left the bytes
	                              checked), 0-based */
	int bad_lane;              /* 0 the copy asked for, 1 the reverse copy (bidir) */
	int host_node;             /* NUMA node the host buffer is on, -1 none or unknown */
	int64_t want_offset;       /* chase: where in the chain the walk should have ended (bad_offset: where
	                              it did, -1 outside the chain) */
	int gated;                 /* batches started by the gate */
	int gate_forced;           /* queueing took so long that the watchdog opened the gate */
};

/* Run one path. CUDA failures ⇒ GP_E_FAIL naming the call; a wrong byte is not an error here:
 * verified = 0 with the offset. */
int gp_xfer_run(struct gp_cuda *c, const struct gp_xfer_spec *s, struct gp_xfer_result *r, struct gp_err *e);

/* A watchdog thread that sets the gate word *flag to 1 after 5 s unless stopped first (a driver that
 * blocks the queueing thread costs time, never a hang). NULL when out of memory (no watchdog). */
void *gp_xfer_watch_start(uint32_t *flag);
/* Stop and free it; 1 when it had to open the gate. */
int gp_xfer_watch_stop(void *w);

/* "h2d", "d2h", "d2d", "peer". */
const char *gp_xfer_kind_name(enum gp_xfer_kind k);

#endif
