/* gpup2p — the chain a pointer-chase latency measurement follows: a buffer cut into slots of `stride`
 * bytes, each slot's first 8 bytes the address of the next slot, all slots in one cycle. Either in
 * address order (slot i -> i+1, the last back to 0; what nvbandwidth's latency tests walk) or in a
 * random order drawn from a seed (defeats prefetchers and spreads the loads over pages). Pure: the
 * chain is built in host memory with the addresses the GPU will see (base = the buffer's device
 * address), and can be walked on the host to know where the GPU must end. */
#ifndef GPUP2P_CHASE_H
#define GPUP2P_CHASE_H

#include <stddef.h>
#include <stdint.h>

#define GP_CHASE_MAX_SLOTS (1ULL << 31)

/* Build the chain in buf[0..size): slots = size / stride (the rest untouched). stride: a multiple of
 * 8, at least 8; at least 2 slots and at most GP_CHASE_MAX_SLOTS. The chain starts at slot 0 (address
 * base). Returns the number of slots, -EINVAL (bad stride or size) or -ENOMEM. */
int64_t gp_chain_build(void *buf, uint64_t size, uint64_t stride, int random, uint64_t seed, uint64_t base);

/* Follow the chain in buf (built with `base`) `hops` times from address `from`. Returns the address
 * reached, or 0 when a pointer leaves the buffer or is not on a slot boundary. */
uint64_t gp_chain_walk(const void *buf, uint64_t size, uint64_t stride, uint64_t base, uint64_t from, uint64_t hops);

#endif
