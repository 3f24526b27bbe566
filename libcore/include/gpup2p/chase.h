/* gpup2p — the chain a pointer-chase latency measurement follows: a buffer cut into slots of `stride`
 * bytes, each slot's first 8 bytes the address of the next slot, all slots in one cycle. Either in
 * address order (slot i -> i+1, the last back to 0; what nvbandwidth's latency tests walk) or in a
 * random order drawn from a seed (defeats prefetchers and spreads the loads over pages). Pure: the
 * chain is built in host memory with the addresses the GPU will see (base = the buffer's device
 * address), and can be walked on the host to know where the GPU must end. The measurement itself
 * (gp_chase_run, xfer/smchase.c) launches smcopy.h's chase kernel. */
#ifndef GPUP2P_CHASE_H
#define GPUP2P_CHASE_H

#include <stddef.h>
#include <stdint.h>

struct gp_cuda;
struct gp_err;
struct gp_xfer_spec;
struct gp_xfer_result;

#define GP_CHASE_MAX_SLOTS (1ULL << 31)

/* Build the chain in buf[0..size): slots = size / stride (the rest untouched). stride: a multiple of
 * 8, at least 8; at least 2 slots and at most GP_CHASE_MAX_SLOTS. The chain starts at slot 0 (address
 * base). Returns the number of slots, -EINVAL (bad stride or size) or -ENOMEM. */
int64_t gp_chain_build(void *buf, uint64_t size, uint64_t stride, int random, uint64_t seed, uint64_t base);

/* Follow the chain in buf (built with `base`) `hops` times from address `from`. Returns the address
 * reached, or 0 when a pointer leaves the buffer or is not on a slot boundary. */
uint64_t gp_chain_walk(const void *buf, uint64_t size, uint64_t stride, uint64_t base, uint64_t from, uint64_t hops);

/* Measure one pointer-chase latency row (spec->chase; gp_xfer_run calls it): build the chain (gp_chain_build)
 * in pinned host memory or the peer GPU's memory, one warm-up launch, then `reps` batches of `iters`
 * loads spread evenly over the GPU's SMs (one launch per SM in turn, each going on where the last
 * stopped; fewer loads than SMs: the first `iters` SMs, a load each); us = microseconds per load, the
 * mean over those SMs. The end of every launch is checked against a walk of the same chain on the host
 * (verified; bad_copy the batch, -1 the warm-up; want_offset, bad_offset). */
int gp_chase_run(struct gp_cuda *c, const struct gp_xfer_spec *s, struct gp_xfer_result *r, struct gp_err *e);

#endif
