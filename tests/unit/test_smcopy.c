/* Unit tests: the pointer-chase chain (chase.h), the SM copy's launch geometry and the indexing of its
 * kernel (smcopy.h, modelled here in C), and the rows `bench --engine sm` plans. No GPU. */
#include <errno.h>
#include <stdint.h>

#include "gpup2p/bench_plan.h"
#include "gpup2p/chase.h"
#include "gpup2p/smcopy.h"
#include "unit.h"

static struct gp_err plan_err; /* gp_bench_plan's account of a refusal */

static uint64_t at(const uint8_t *buf, uint64_t slot, uint64_t stride)
{
	uint64_t a;

	memcpy(&a, buf + slot * stride, 8);
	return a;
}

/* 1 when following the chain from base visits every one of n slots once and is back at base after n. */
static int one_cycle(const uint8_t *buf, uint64_t n, uint64_t stride, uint64_t base)
{
	uint8_t *seen = calloc(n, 1);
	uint64_t a = base;
	int ok = seen != NULL;

	for (uint64_t k = 0; k < n && ok; k++) {
		uint64_t slot = (a - base) / stride;

		ok = a >= base && (a - base) % stride == 0 && slot < n && !seen[slot];
		if (ok) {
			seen[slot] = 1;
			a = at(buf, slot, stride);
		}
	}
	free(seen);
	return ok && a == base;
}

static void chain_tests(void)
{
	static uint8_t a[64 * 1000 + 40], b[sizeof(a)];
	const uint64_t base = 0x7f0000001000ULL;
	int64_t n;
	int moved = 0;

	n = gp_chain_build(a, sizeof(a), 64, 0, 0, base);
	CHECK(n == 1000, "stride chain: 64,040 bytes at stride 64 make 1000 slots (%lld)", (long long)n);
	CHECK(at(a, 0, 64) == base + 64 && at(a, 41, 64) == base + 42 * 64 && at(a, 999, 64) == base,
	      "stride chain: slot i points at slot i+1, the last back at slot 0");
	CHECK(one_cycle(a, 1000, 64, base), "stride chain: one cycle through every slot");
	CHECK(gp_chain_walk(a, sizeof(a), 64, base, base, 5) == base + 5 * 64 &&
	      gp_chain_walk(a, sizeof(a), 64, base, base, 1000) == base &&
	      gp_chain_walk(a, sizeof(a), 64, base, base + 998 * 64, 3) == base + 64, "walks: 5 slots on, round, wrapped");

	n = gp_chain_build(a, sizeof(a), 64, 1, 7, base);
	CHECK(n == 1000 && one_cycle(a, 1000, 64, base), "random chain (seed 7): one cycle through all 1000 slots");
	for (uint64_t i = 0; i < 1000; i++)
		moved += at(a, i, 64) != base + ((i + 1) % 1000) * 64;
	CHECK(moved > 900, "random chain: not the address order (%d of 1000 slots differ from it)", moved);
	gp_chain_build(b, sizeof(b), 64, 1, 7, base);
	CHECK(!memcmp(a, b, sizeof(a)), "random chain: the same seed gives the same chain");
	gp_chain_build(b, sizeof(b), 64, 1, 8, base);
	CHECK(memcmp(a, b, sizeof(a)) && one_cycle(b, 1000, 64, base), "random chain: another seed, another cycle");
	n = gp_chain_build(a, 16, 8, 1, 3, base);
	CHECK(n == 2 && at(a, 0, 8) == base + 8 && at(a, 1, 8) == base, "two slots: the only cycle");
	CHECK(gp_chain_build(a, sizeof(a), 0, 0, 0, base) == -EINVAL && gp_chain_build(a, sizeof(a), 12, 0, 0, base) == -EINVAL &&
	      gp_chain_build(a, 100, 64, 0, 0, base) == -EINVAL, "stride 0, stride 12, one slot: refused");
	gp_chain_build(a, sizeof(a), 64, 0, 0, base);
	{
		uint64_t bad = base + 3;

		memcpy(a + 10 * 64, &bad, 8);
	}
	CHECK(gp_chain_walk(a, sizeof(a), 64, base, base, 11) == 0 && gp_chain_walk(a, sizeof(a), 64, base, base + 8, 1) == 0 &&
	      gp_chain_walk(a, sizeof(a), 64, base, base - 64, 0) == 0, "walks off a slot boundary or the buffer: 0");
}

/* The kernel's indexing (ptx_kernels.c) in C: thread t of T copies 16-byte words t + kT, eight per round
 * while the round's last word is inside, then one at a time; threads below `tail` copy one byte each.
 * Counts how often each byte is written. */
static int model_covers(struct gp_sm_geom g, uint64_t size)
{
	uint64_t T = (uint64_t)g.grid * g.block, words = size / 16, tail = size % 16;
	uint8_t *hits = calloc(size ? size : 1, 1);
	int ok = hits != NULL;

	for (uint64_t t = 0; t < T && ok; t++) {
		uint64_t w = t;

		for (; w + 7 * T < words; w += 8 * T)
			for (int k = 0; k < 8; k++)
				for (int b = 0; b < 16; b++)
					hits[(w + (uint64_t)k * T) * 16 + (uint64_t)b]++;
		for (; w < words; w += T)
			for (int b = 0; b < 16; b++)
				hits[w * 16 + (uint64_t)b]++;
		if (t < tail)
			hits[words * 16 + t]++;
	}
	for (uint64_t i = 0; i < size && ok; i++)
		ok = hits[i] == 1;
	free(hits);
	return ok;
}

/* gp_copy_duplex's indexing (ptx_kernels.c) in C: as model_covers, and every word a thread copies is in
 * a GP_SM_STRIPE-byte stripe of its warp's parity (even warps copy a to b, odd ones b to a). */
static int model_duplex(struct gp_sm_geom g, uint64_t size)
{
	uint64_t T = (uint64_t)g.grid * g.block, words = size / 16;
	int ok = model_covers(g, size);

	for (uint64_t t = 0; t < T && ok; t++)
		for (uint64_t w = t; w < words && ok; w += T)
			ok = (w * 16 / GP_SM_STRIPE) % 2 == (t / 32) % 2;
	return ok;
}

static void duplex_geometry_tests(void)
{
	static const uint64_t sizes[] = { 1, 17, 512, 513, 12288, 100003, 1 << 20, (1 << 20) + 9, 3 << 20 };
	struct gp_sm_geom g;
	int all = 1;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		{
			gp_sm_duplex_geometry(sizes[i], &g);
			if (g.block % 64 || !model_duplex(g, sizes[i])) {
				all = 0;
				printf("# duplex: size %llu (%u x %u): a byte twice, never or the wrong way\n",
				       (unsigned long long)sizes[i], g.grid, g.block);
			}
		}
	CHECK(all, "duplex copy: 9 sizes, every byte once, each warp in stripes of its parity");
	gp_sm_geometry(132, 12288, &g);
	CHECK(g.block == 96 && !model_duplex(g, 12288),
	      "the duplex model can fail: gp_copy16's block of 96 for 12288 bytes puts warps in both parities");
	gp_sm_duplex_geometry(12288, &g);
	CHECK(g.block == 768 && g.grid == 1, "12288 bytes duplex: one thread per word, 768 in one block (%u x %u)",
	      g.grid, g.block);
	gp_sm_duplex_geometry(512ULL << 20, &g);
	CHECK(g.block == GP_SM_DUPLEX_BLOCK && (uint64_t)g.grid * g.block == (512ULL << 20) / 16,
	      "512 MiB duplex: a thread per 16-byte word, as on the H200 probe (%u x %u)", g.grid, g.block);
}

/* Which copies take the bulk copy: Hopper onwards, within one GPU, source and destination beyond the L2,
 * a chunk for every SM at least. */
static void bulk_policy_tests(void)
{
	const uint64_t l2 = 50ULL << 20, big = 512ULL << 20;

	CHECK(GP_SM_BULK_SMEM == 49152 && GP_SM_BULK_BLOCK == 64, "bulk copy: three 16 KiB buffers, 64 threads a block");
	CHECK(gp_sm_use_bulk(9, 132, l2, big, GP_SM_LOCAL) && gp_sm_use_bulk(10, 148, l2, big, GP_SM_LOCAL),
	      "512 MiB within a GPU, cc 9 and 10: bulk");
	CHECK(!gp_sm_use_bulk(9, 132, l2, big, GP_SM_PEER) && !gp_sm_use_bulk(9, 132, l2, big, GP_SM_HOST),
	      "peer or host memory: never bulk");
	CHECK(!gp_sm_use_bulk(8, 108, l2, big, GP_SM_LOCAL) && !gp_sm_use_bulk(7, 80, l2, 1ULL << 30, GP_SM_LOCAL),
	      "before Hopper (cc 8, 7): never bulk");
	CHECK(gp_sm_use_bulk(9, 132, l2, l2 / 2 + 1, GP_SM_LOCAL) && !gp_sm_use_bulk(9, 132, l2, l2 / 2, GP_SM_LOCAL),
	      "the L2 threshold: source and destination together beyond a 50 MiB L2 (25 MiB + 1 byte), not at 25 MiB");
	CHECK(gp_sm_use_bulk(9, 132, 0, 132ULL * GP_SM_BULK_CHUNK, GP_SM_LOCAL) &&
	      !gp_sm_use_bulk(9, 132, 0, 132ULL * GP_SM_BULK_CHUNK - 1, GP_SM_LOCAL),
	      "the SM threshold (no L2 said): one chunk for each of 132 SMs, not a byte less");
	CHECK(!gp_sm_use_bulk(9, 0, l2, 1ULL << 30, GP_SM_LOCAL), "an SM count of 0: not bulk");
}

static void geometry_tests(void)
{
	static const uint64_t sizes[] = { 1, 15, 16, 17, 127, 128, 129, 4095, 65536 + 3, 100003, 1 << 20, (1 << 20) + 9 };
	struct gp_sm_geom g;
	int all = 1;

	gp_sm_geometry(132, 512ULL << 20, &g);
	CHECK(g.block == 512 && g.grid == 264, "512 MiB on 132 SMs: 264 blocks (2 per SM) of 512 (%u x %u)", g.grid, g.block);
	gp_sm_geometry(132, 1, &g);
	CHECK(g.block == 32 && g.grid == 1, "1 byte: one warp (%u x %u)", g.grid, g.block);
	gp_sm_geometry(132, 100003, &g);
	CHECK(g.block == 512 && g.grid == 2, "100003 bytes: 6250 words = 782 groups of 8: 2 blocks of 512 (%u x %u)",
	      g.grid, g.block);
	gp_sm_geometry(132, 12288, &g);
	CHECK(g.block == 96 && g.grid == 1, "12288 bytes: 96 groups of 8 words, one block of 96 (%u x %u)", g.grid, g.block);
	gp_sm_geometry(0, 1 << 30, &g);
	CHECK(g.grid == 2 && g.block == 512, "an SM count of 0 counts as 1");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int sms = 1; sms <= 3; sms += 2) {
			gp_sm_geometry(sms, sizes[i], &g);
			if (!model_covers(g, sizes[i])) {
				all = 0;
				printf("# size %llu on %d SMs (%u x %u): a byte copied twice or never\n",
				       (unsigned long long)sizes[i], sms, g.grid, g.block);
			}
		}
	}
	CHECK(all, "every byte of 12 odd sizes copied exactly once (kernel indexing with the planned geometry)");
	g.grid = 1;
	g.block = 4;
	CHECK(!model_covers(g, 15), "the model can fail: 4 threads cannot cover a 15-byte tail");
}

static int peer_01(void *ctx, int a, int b)
{
	(void)ctx;
	return a != b && a < 2 && b < 2;
}

static int count(const struct gp_bench_row *r, int n, const char *mode, int sm, int skipped)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += !strcmp(r[i].mode, mode) && r[i].spec.sm == sm && (skipped < 0 || (r[i].skip != NULL) == skipped);
	return k;
}

static void plan_tests(void)
{
	struct gp_bench_opts o = { .modes = GP_BENCH_ALL, .gpus = (const int[]){ 0, 1, 2 }, .ngpus = 3,
				   .sizes = (const uint64_t[]){ 1 << 20, 1 << 22 }, .nsizes = 2, .lat_size = 4, .iters = 10,
				   .reps = 5, .lat_iters = 1000, .lat_reps = 4, .mem = GP_MEM_PINNED | GP_MEM_PAGEABLE,
				   .numa = -1, .can_peer = peer_01, .engine = GP_ENGINE_SM, .chain_size = 64 << 20,
				   .chain_stride = 128, .chase_hops = 100000, .chain_seed = 9 };
	struct gp_bench_row *r;
	int n = gp_bench_plan(&o, &r, &plan_err), chase = 0;

	/* pinned only: h2d 3 x 2 = 6, d2h 6, d2d 6; peer access on only: p2p 6 pairs x write/read x 2 = 24,
	 * bidir 3 x 2 = 6; latency: 3 host chases + 6 peer chases = 9 */
	CHECK(n == 57, "SM plan for 3 GPUs, 2 sizes: 57 rows (%d)", n);
	CHECK(count(r, n, "h2d", 1, -1) == 6 && count(r, n, "d2h", 1, -1) == 6 && count(r, n, "d2d", 1, -1) == 6 &&
	      count(r, n, "p2p", 1, -1) == 24 && count(r, n, "bidir", 1, -1) == 6 && count(r, n, "latency", 1, -1) == 9,
	      "SM rows per mode 6/6/6/24/6/9, every one marked sm");
	CHECK(count(r, n, "p2p", 1, 1) == 16 && count(r, n, "bidir", 1, 1) == 4 && count(r, n, "latency", 1, 1) == 4,
	      "SM rows needing peer access with GPU2: kept, skipped");
	for (int i = 0; i < n; i++) {
		const struct gp_xfer_spec *s = &r[i].spec;

		if ((s->kind == GP_XFER_H2D || s->kind == GP_XFER_D2H) && !s->pinned)
			chase = -1000;
		if (s->kind == GP_XFER_PEER && !s->p2p)
			chase = -1000;
		if (s->chase)
			chase += s->size == 64 << 20 && s->stride == 128 && s->iters == 100000 && s->reps == 4 &&
				 s->seed == 9 && !s->host_timing;
	}
	CHECK(chase == 9, "no pageable or peer-off SM row; 9 chase rows with the chain options (%d)", chase);
	CHECK(!strcmp(r[n - 9].what, "host") && r[n - 9].spec.kind == GP_XFER_H2D && !strcmp(r[n - 1].what, "p2p") &&
	      r[n - 1].spec.kind == GP_XFER_PEER, "chase rows: host ones first, then peer ones");
	free(r);
	o.engine = GP_ENGINE_CE | GP_ENGINE_SM;
	o.modes = GP_BENCH_H2D;
	n = gp_bench_plan(&o, &r, &plan_err);
	CHECK(n == 12 + 6 && !r[0].spec.sm && r[11].spec.sm == 0 && r[12].spec.sm == 1 && r[17].spec.sm == 1,
	      "--engine both: the copy-engine rows, then the SM rows (%d)", n);
	free(r);
	o.modes = GP_BENCH_LATENCY;
	o.chain_size = 0;
	CHECK(gp_bench_plan(&o, &r, &plan_err) == -EINVAL, "SM latency without a chain size: refused");
	o.engine = 4;
	o.chain_size = 1 << 20;
	CHECK(gp_bench_plan(&o, &r, &plan_err) == -EINVAL, "an unknown engine: refused");
}

/* The chain of SM latency rows when the caller gives none: twice the largest L2 cache of the session's
 * GPUs rounded up to MiB, 64 MiB at least (libcuda's test double: FAKECUDA_L2 bytes on every GPU). */
static void plan_chain_default(void)
{
	static const struct { const char *l2; uint64_t want; } t[] = {
		{ "1048576", 64ULL << 20 },          /* 2 MiB: the 64 MiB floor */
		{ "50331648", 96ULL << 20 },         /* 48 MiB: 96 MiB */
		{ "40000001", 77ULL << 20 },         /* 80000002 bytes = 76.3 MiB: up to 77 MiB */
	};
	const char *fx = getenv("GPUP2P_FIXTURES");
	char lib[1024];
	struct gp_cuda cu;
	struct gp_err e = { 0 };

	snprintf(lib, sizeof(lib), "%s/../tests/fakecuda/libcuda.so.1", fx ? fx : "build/fixtures");
	setenv("GPUP2P_LIBCUDA", lib, 1);
	setenv("FAKECUDA_GPUS", "2", 1);
	if (gp_cuda_open(&cu, &e)) {
		CHECK(0, "libcuda's test double opens (%s)", e.msg);
		return;
	}
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		struct gp_bench_opts o = { .modes = GP_BENCH_LATENCY, .gpus = (const int[]){ 0, 1 }, .ngpus = 2,
					   .lat_size = 4, .iters = 1, .reps = 1, .lat_iters = 1, .lat_reps = 1,
					   .numa = -1, .can_peer = peer_01, .engine = GP_ENGINE_SM, .chain_stride = 128,
					   .chase_hops = 100, .cuda = &cu };
		struct gp_bench_row *r = NULL;
		int n, ok = 0;

		setenv("FAKECUDA_L2", t[k].l2, 1);
		n = gp_bench_plan(&o, &r, &plan_err);
		for (int i = 0; i < n; i++)
			ok += r[i].spec.chase && r[i].spec.size == t[k].want;
		CHECK(n > 0 && ok == n, "L2 of %s bytes: every chase row has a %llu-byte chain (%d of %d)", t[k].l2,
		      (unsigned long long)t[k].want, ok, n);
		free(r);
	}
	unsetenv("FAKECUDA_L2");
	gp_cuda_close(&cu);
}

int main(void)
{
	chain_tests();
	geometry_tests();
	duplex_geometry_tests();
	bulk_policy_tests();
	plan_tests();
	plan_chain_default();
	return unit_done();
}
