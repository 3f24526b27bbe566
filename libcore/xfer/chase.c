/* gpup2p — the pointer-chase chain: build it, walk it on the host. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/chase.h"

/* splitmix64 as a generator: one state word, every output bit depends on every state bit. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t x = (*s += 0x9e3779b97f4a7c15ULL);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* An unbiased draw from [0, n) (rejection of the short last range). */
static uint64_t below(uint64_t *s, uint64_t n)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % n, x;

	do
		x = next_rand(s);
	while (x >= lim);
	return x % n;
}

static void put(uint8_t *p, uint64_t slot, uint64_t stride, uint64_t addr)
{
	memcpy(p + slot * stride, &addr, 8);
}

int64_t gp_chain_build(void *buf, uint64_t size, uint64_t stride, int random, uint64_t seed, uint64_t base)
{
	uint64_t n = stride ? size / stride : 0, s = seed;
	uint32_t *order;

	if (!stride || stride % 8 || n < 2 || n > GP_CHASE_MAX_SLOTS)
		return -EINVAL;
	if (!random) {
		for (uint64_t i = 0; i < n; i++)
			put(buf, i, stride, base + ((i + 1) % n) * stride);
		return (int64_t)n;
	}
	/* slot 0 first, then the others shuffled (Fisher-Yates): visiting them in that order and back to
	 * 0 is one cycle through every slot */
	order = malloc(n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (uint64_t i = n - 1; i > 1; i--) {
		uint64_t j = 1 + below(&s, i);   /* j in [1, i] */
		uint32_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (uint64_t i = 0; i < n; i++)
		put(buf, order[i], stride, base + (uint64_t)order[(i + 1) % n] * stride);
	free(order);
	return (int64_t)n;
}

uint64_t gp_chain_walk(const void *buf, uint64_t size, uint64_t stride, uint64_t base, uint64_t from, uint64_t hops)
{
	const uint8_t *p = buf;
	uint64_t n = stride ? size / stride : 0, a = from;

	for (uint64_t k = 0; k < hops; k++) {
		if (!n || a < base || a - base >= n * stride || (a - base) % stride)
			return 0;
		memcpy(&a, p + (a - base), 8);
	}
	if (!n || a < base || a - base >= n * stride || (a - base) % stride)
		return 0;
	return a;
}
