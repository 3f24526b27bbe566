/* gpup2p — pin and map GPU memory end to end: allocate with CUDA, pin through gpup2p.ko, map, write
 * a pattern through the mapping and read it back through CUDA (and the other way round), timing each
 * step. What `gpup2p pin`, `gpup2p map` and `gpup2p copy --via map` run. */
#ifndef GPUP2P_PINMAP_H
#define GPUP2P_PINMAP_H

#include "gpup2p/cuda.h"
#include "gpup2p/pin.h"
#include "gpup2p/wccopy.h"

enum { GP_PM_PIN_ONLY = 0, GP_PM_WRITE = 1, GP_PM_READ = 2, GP_PM_BOTH = 3 };

struct gp_pinmap_spec {
	int gpu;
	uint64_t size;             /* bytes to map and copy */
	uint64_t offset;           /* where the mapping starts inside the pin (multiple of 4 KiB) */
	int persistent;            /* pin without a free callback */
	int what;                  /* GP_PM_*: pin only, or copies through the mapping */
	int iters;                 /* timed copies per direction */
	enum gp_wc_isa isa;
	const char *device;        /* NULL: /dev/gpup2p */
};

struct gp_pinmap_result {
	const char *backend;       /* "kmod", or "dmabuf" (no gpup2p.ko, and the driver maps dma-bufs) */
	struct gp_pin_region r;    /* as pinned (kmod) */
	uint64_t va;               /* the CUDA allocation */
	double alloc_us, pin_us, map_us, unmap_us, unpin_us;
	double write_gbps, read_gbps;   /* median through the mapping, GB/s = 1e9 B/s; 0 not measured */
	double write_min, write_max, read_min, read_max; /* GB/s of the slowest and fastest copy */
	double write_us_min, read_us_min; /* fastest single copy */
	int verified;              /* 1 every byte right both ways, 0 a mismatch, -1 nothing copied */
	int bad_dir;               /* GP_PM_WRITE or GP_PM_READ: the direction that was wrong */
	int64_t bad_offset;
	uint8_t want, got;
};

/* Run it. Without gpup2p.ko, map falls back to a CUDA dma-buf export mapped with mmap where the
 * driver allows that; GP_E_UNAVAIL with both reasons when neither works (the message says how to
 * load the module, and what the dma-buf attempt gave). */
int gp_pinmap_run(struct gp_cuda *c, const struct gp_pinmap_spec *s, struct gp_pinmap_result *r, struct gp_err *e);

/* Whether the dma-buf backend works on GPU gpu (export 64 KiB, mmap it): 1 yes, 0 no; why says what
 * happened either way. */
int gp_pinmap_dmabuf_probe(struct gp_cuda *c, int gpu, char *why, size_t n);

#endif
