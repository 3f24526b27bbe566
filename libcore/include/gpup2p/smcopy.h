/* gpup2p — copies and pointer chases done by the GPU's own cores (SMs) instead of its copy engines:
 * the kernels are PTX text in the binary (ptx_kernels.c), JIT-compiled by the driver, launched on a
 * stream like any copy. The launch geometry is pure and unit-tested without a GPU. */
#ifndef GPUP2P_SMCOPY_H
#define GPUP2P_SMCOPY_H

#include <stddef.h>
#include <stdint.h>

#include "gpup2p/cuda.h"
#include "gpup2p/xfer.h"

#ifndef GP_SM_BLOCK
#define GP_SM_BLOCK 512           /* threads per block of the copy kernel */
#endif
#define GP_SM_UNROLL 8            /* 16-byte words each thread has in flight */
#ifndef GP_SM_BLOCKS_PER_SM
#define GP_SM_BLOCKS_PER_SM 2     /* blocks per SM of a large copy */
#endif

/* The PTX module (NUL-terminated) and its kernels' names. */
extern const char gp_ptx_text[];
extern const char gp_ptx_copy_name[];
extern const char gp_ptx_chase_name[];

/* Grid and block of a copy of `size` bytes on a GPU with `sms` SMs: GP_SM_BLOCKS_PER_SM blocks of
 * GP_SM_BLOCK threads per SM, fewer when the copy is small (no more threads than groups of
 * GP_SM_UNROLL words, at least one warp, block a multiple of 32). Also covers the byte tail (< 16). */
struct gp_sm_geom {
	unsigned grid, block;
};
void gp_sm_geometry(int sms, uint64_t size, struct gp_sm_geom *g);

/* Load the kernels on GPU g (once per session) and read its SM count: call before a gated batch, so
 * that the JIT never runs while a stream waits on the gate. */
int gp_sm_prepare(struct gp_cuda *c, int g, struct gp_err *e);

/* Queue an SM copy of n bytes on the stream (the kernel runs on the stream's GPU; src and dst are
 * device addresses that GPU can reach: its memory, a peer's with peer access, mapped pinned host
 * memory). Both 16-byte aligned, else -EINVAL. */
int gp_sm_copy(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr dst, gp_dptr src, size_t n, struct gp_err *e);

/* Queue a pointer chase of `hops` loads from `start` on the stream; the last pointer and the
 * nanoseconds (GPU global timer) go to out[0] and out[1] (out: a device address of 16 bytes). */
int gp_sm_chase(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr start, uint64_t hops, gp_dptr out, struct gp_err *e);

/* The default chain for a chase from the GPUs in c: twice the largest L2 cache, rounded up to a MiB,
 * 64 MiB at least (so that no load is served from L2). */
int gp_sm_chain_default(struct gp_cuda *c, uint64_t *size, struct gp_err *e);

/* Measure one pointer-chase latency row (spec->chase; gp_xfer_run calls it): build the chain (chase.h)
 * in pinned host memory or the peer GPU's memory, one warm-up launch, then `reps` launches of `iters`
 * loads, each going on where the last stopped; us = microseconds per load. The end of every launch is
 * checked against a walk of the same chain on the host (verified, want_offset, bad_offset). */
int gp_chase_run(struct gp_cuda *c, const struct gp_xfer_spec *s, struct gp_xfer_result *r, struct gp_err *e);

#endif
