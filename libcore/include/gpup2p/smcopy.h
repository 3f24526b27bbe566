/* gpup2p — copies and pointer chases done by the GPU's own cores (SMs) instead of its copy engines:
 * the kernels are PTX text in the binary (ptx_kernels.c), JIT-compiled by the driver, launched on a
 * stream like any copy. The launch geometry is pure and unit-tested without a GPU. */
#ifndef GPUP2P_SMCOPY_H
#define GPUP2P_SMCOPY_H

#include <stddef.h>
#include <stdint.h>

#include "gpup2p/cuda.h"

#ifndef GP_SM_BLOCK
#define GP_SM_BLOCK 512           /* threads per block of the copy kernel */
#endif
#define GP_SM_UNROLL 8            /* 16-byte words each thread has in flight */
#ifndef GP_SM_BLOCKS_PER_SM
#define GP_SM_BLOCKS_PER_SM 2     /* blocks per SM of a large copy */
#endif

/* The bulk copy (gp_copy_bulk, compute capability 9.0 onwards): chunk size and buffers per SM, the
 * shared memory they take, and the threads of a block (thread 0 the pipeline, warp 1 the rest). */
#define GP_SM_BULK_CHUNK 16384
#define GP_SM_BULK_STAGES 3
#define GP_SM_BULK_SMEM (GP_SM_BULK_CHUNK * GP_SM_BULK_STAGES)
#define GP_SM_BULK_BLOCK 64

/* The duplex copy (gp_copy_duplex): bytes per stripe; even stripes go one way, odd ones the other. */
#define GP_SM_STRIPE 512

/* The PTX modules (NUL-terminated) and their kernels' names: gp_ptx_text (gp_copy16, gp_copy_duplex,
 * gp_chase; sm_70) and gp_ptx_bulk_text (gp_copy_bulk; sm_90). */
extern const char gp_ptx_text[];
extern const char gp_ptx_copy_name[];
extern const char gp_ptx_duplex_name[];
extern const char gp_ptx_chase_name[];
extern const char gp_ptx_bulk_text[];
extern const char gp_ptx_bulk_name[];

/* Grid and block of a copy of `size` bytes on a GPU with `sms` SMs: GP_SM_BLOCKS_PER_SM blocks of
 * GP_SM_BLOCK threads per SM, fewer when the copy is small (no more threads than groups of
 * GP_SM_UNROLL words, at least one warp, block a multiple of 32). Also covers the byte tail (< 16). */
struct gp_sm_geom {
	unsigned grid, block;
};
void gp_sm_geometry(int sms, uint64_t size, struct gp_sm_geom *g);

/* The duplex copy's grid and block: one thread per 16-byte word (blocks of GP_SM_DUPLEX_BLOCK threads,
 * fewer for a small copy, always a multiple of 64 so that every warp's words stay in stripes of its
 * warp's parity: gp_copy_duplex), at most GP_SM_GRID_MAX blocks (beyond that the kernel's grid stride
 * covers the rest). A thread per word moves 42.0 GB/s a direction between an H200 and pinned host
 * memory where two blocks of 512 per SM striding the buffer moved 40.7 (tests/perf/duplex_probe.cu). */
#define GP_SM_DUPLEX_BLOCK 1024
#define GP_SM_GRID_MAX 0x7fffffffU
void gp_sm_duplex_geometry(uint64_t size, struct gp_sm_geom *g);

/* Where an SM copy's ends are, seen from the GPU that runs it: both in its memory, one in host memory,
 * one in a peer GPU's memory. */
enum gp_sm_where { GP_SM_LOCAL, GP_SM_HOST, GP_SM_PEER };

/* Whether a copy of n bytes goes through the bulk copy (gp_copy_bulk) rather than gp_copy16, on a GPU of
 * compute capability cc_major with sms SMs and an L2 cache of l2 bytes, where it was measured to be
 * faster (H100, tests/perf/sm_tune.py and a size sweep): Hopper onwards (cc_major >= 9), both ends in
 * the GPU's memory (with host memory it was no faster; peer memory is not measured yet), source and
 * destination together larger than the L2 (below, repeated copies run from L2 and gp_copy16 is faster:
 * 1.84 against 1.29 TB/s at 8 MiB on the H100), and at least a chunk for every SM. */
int gp_sm_use_bulk(int cc_major, int sms, uint64_t l2, uint64_t n, enum gp_sm_where where);

/* Get SM copies and chases ready on the stream's GPU (the kernels once per GPU and session, the counter
 * once per stream) before a gated batch, so that
 * the JIT never runs while a stream waits on the gate: the kernels, and on GPUs that can run the bulk
 * copy its module (a driver that cannot JIT it leaves gp_copy16 for every copy), its shared memory and
 * the stream's chunk counter. */
int gp_sm_prepare(struct gp_cuda *c, gp_cuda_stream *s, struct gp_err *e);

/* Queue `reps` SM copies of n bytes on the stream, one after the other (the kernel runs on the stream's
 * GPU; src and dst are device addresses that GPU can reach: its memory, a peer's with peer access,
 * mapped pinned host memory; `where` says which). Both 16-byte aligned, else -EINVAL. The bulk copy
 * when gp_sm_use_bulk says so and its module loaded, one launch a copy; else one launch of gp_copy16
 * for all of them (each pass streams the buffer; no gap between passes, where each launch ramps down
 * and up: tests/perf/results/sm-peer-loop-*.txt). reps 0 is taken as 1. */
int gp_sm_copy(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr dst, gp_dptr src, size_t n, enum gp_sm_where where,
	       unsigned reps, struct gp_err *e);

/* Queue a duplex SM copy on the stream: one kernel (gp_copy_duplex) whose even warps copy the even
 * GP_SM_STRIPE-byte stripes of n bytes from a to b and whose odd warps copy the odd stripes from b to a,
 * at the same time (nvbandwidth's bidirectional SM tests): n bytes move in all, about half each way.
 * a and b as for gp_sm_copy, both 16-byte aligned, else -EINVAL. */
int gp_sm_copy_duplex(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr a, gp_dptr b, size_t n, struct gp_err *e);

/* GPU g's SM count in *n (1 when the driver says 0 or less); -EIO when it cannot be asked. */
int gp_sm_count(struct gp_cuda *c, int g, unsigned *n, struct gp_err *e);

/* Queue a pointer chase of `hops` loads from `start` on the stream, by block `block` of a launch of
 * `grid` one-thread blocks (the others return at once; with a block per SM, block b runs on the SM
 * the hardware gives it); the last pointer and the nanoseconds (GPU global timer) go to out[0] and
 * out[1] (out: a device address of 16 bytes). -EINVAL when block >= grid. */
int gp_sm_chase(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr start, uint64_t hops, gp_dptr out, unsigned block,
		unsigned grid, struct gp_err *e);

/* The verification kernels' PTX module (ptx_verify.c: gp_fill, gp_check; PTX 6.0, sm_50) and names. */
extern const char gp_ptx_verify_text[];
extern const char gp_ptx_fill_name[];
extern const char gp_ptx_check_name[];

/* Queue on stream s the pattern of `seed` (gp_pattern_fill's bytes) into n bytes at buf, written by the
 * stream's GPU: its memory, or mapped pinned host memory (8-byte aligned, else -EINVAL). */
int gp_sm_fill(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr buf, size_t n, uint64_t seed, struct gp_err *e);

/* As gp_sm_fill, the pattern of seed_even in buf's even GP_SM_STRIPE-byte stripes (by offset from buf)
 * and seed_odd's in the odd ones: a duplex copy's buffer, each half its own. */
int gp_sm_fill_split(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr buf, size_t n, uint64_t seed_even, uint64_t seed_odd,
		     struct gp_err *e);

/* Check n bytes at buf (as gp_sm_fill's) against the pattern of `seed` on the stream's GPU, after the
 * stream's earlier work, and wait for the answer: *bad = -1 when every byte matches, else the offset
 * of the first wrong byte, with the byte expected (*want) and found (*got). Only a 16-byte result and
 * the wrong word cross to the host; `host` is buf's host address when it is pinned host memory (the
 * word is read there), NULL for GPU memory. 0 or -EIO (-EINVAL: buf not 8-byte aligned). */
int gp_sm_check(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr buf, const void *host, size_t n, uint64_t seed,
		int64_t *bad, uint8_t *want, uint8_t *got, struct gp_err *e);

/* The default chain for a chase from the GPUs in c: twice the largest L2 cache, rounded up to a MiB,
 * 64 MiB at least (so that no load is served from L2). */
int gp_sm_chain_default(struct gp_cuda *c, uint64_t *size, struct gp_err *e);

#endif
