/* Device-only check of the verification kernels (libcore/cuda/ptx_verify.c) on a real GPU, against the
 * CPU's pattern (gp_pattern_fill / gp_pattern_check): GPU 0 fills its memory and page-locked host
 * memory, the CPU and the GPU check each other's patterns, planted wrong bytes (in a word and in the
 * tail) are found to the byte, a wrong seed from byte 0; a fill in halves and the duplex SM copy
 * (gp_copy_duplex) between the two leave both buffers whole. Prints one line per check and the fill/check
 * rates; exit 0 when all hold, 1 otherwise, 69 without a GPU. Argument: the buffer in MiB (default 512;
 * tests/cli/test_bench_verify.sh runs it with 1 on the test double).
 * Build (repository root, after make): cc -std=c11 -D_GNU_SOURCE -Ilibcore/include -o pattern_kernels
 *   tests/device/pattern_kernels.c build/libgpup2p.a -lpci -lkmod -ldl -lpthread -lm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpup2p/bench.h"
#include "gpup2p/smcopy.h"

static int fails;

static void expect(int cond, const char *what)
{
	printf("%s - %s\n", cond ? "ok" : "not ok", what);
	fails += !cond;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* GPU 0 checks n bytes at d against seed: the first wrong byte or -1; -2 on a CUDA error. */
static int64_t gcheck(struct gp_cuda *c, gp_cuda_stream *s, gp_dptr d, const void *host, size_t n, uint64_t seed,
		      uint8_t *want, uint8_t *got)
{
	struct gp_err e = { 0 };
	int64_t bad;

	if (gp_sm_check(c, s, d, host, n, seed, &bad, want, got, &e)) {
		printf("# %s\n", e.msg);
		return -2;
	}
	return bad;
}

int main(int argc, char **argv)
{
	struct gp_cuda c;
	struct gp_err e = { 0 };
	gp_cuda_stream *s;
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 512, n = (mib << 20) + 3, small = 4099;
	size_t at = n / 2 + 1;                         /* a 3-byte tail; a tail after word 512 */
	gp_dptr d, hd;
	uint8_t *h, *back, want = 0, got = 0, x;
	double t;
	int64_t b;

	if (gp_cuda_open(&c, &e)) {
		printf("# %s\n", e.msg);
		return 69;
	}
	if (gp_cuda_stream_new(&c, 0, &s, &e) || gp_cuda_alloc(&c, 0, n, &d, &e) ||
	    gp_cuda_host_alloc(&c, small, (void **)&h, &e) || gp_cuda_host_dptr(&c, h, &hd, &e) || !(back = malloc(n))) {
		printf("# setup: %s\n", e.msg);
		return 1;
	}
	t = now();
	expect(!gp_sm_fill(&c, s, d, n, 7, &e) && !gp_cuda_sync(&c, s, &e), "the GPU fills its memory (the buffer, 3 bytes of tail)");
	printf("# fill %.1f GB/s (with launch and wait)\n", (double)n / (now() - t) / 1e9);
	expect(!gp_cuda_d2h(&c, s, back, d, n, &e) && !gp_cuda_sync(&c, s, &e) &&
	       gp_pattern_check(back, n, 7, &want, &got) == -1, "the CPU finds the GPU's pattern, every byte");
	t = now();
	b = gcheck(&c, s, d, NULL, n, 7, &want, &got);
	printf("# check %.1f GB/s (with launch and wait)\n", (double)n / (now() - t) / 1e9);
	expect(b == -1, "the GPU finds its own pattern");
	expect(gcheck(&c, s, d, NULL, n, 8, &want, &got) == 0, "another seed: wrong from byte 0");
	x = back[at] ^ 0x40;
	expect(!gp_cuda_h2d(&c, s, d + at, &x, 1, &e) && !gp_cuda_sync(&c, s, &e) &&
	       gcheck(&c, s, d, NULL, n, 7, &want, &got) == (int64_t)at && want == back[at] && got == x,
	       "one byte planted in the middle: found, sent and found values right");
	x = back[n - 2] ^ 1;
	expect(!gp_cuda_h2d(&c, s, d + at, &back[at], 1, &e) && !gp_cuda_h2d(&c, s, d + n - 2, &x, 1, &e) &&
	       !gp_cuda_sync(&c, s, &e) && gcheck(&c, s, d, NULL, n, 7, &want, &got) == (int64_t)n - 2,
	       "one tail byte planted (n - 2): found");
	gp_pattern_fill(h, small, 9);
	expect(gcheck(&c, s, hd, h, small, 9, &want, &got) == -1, "the GPU finds the CPU's pattern in pinned host memory");
	h[4097] ^= 0x10;
	expect(gcheck(&c, s, hd, h, small, 9, &want, &got) == 4097, "a wrong tail byte of pinned host memory: 4097");
	expect(!gp_sm_fill(&c, s, hd, small, 11, &e) && !gp_cuda_sync(&c, s, &e) &&
	       gp_pattern_check(h, small, 11, &want, &got) == -1, "the GPU fills pinned host memory, the CPU agrees");
	/* the duplex copy (gp_copy_duplex): each buffer filled in halves (13 in the stripes it gives, 17 or 19
	 * in those it gets), then one kernel both ways between pinned host memory and the GPU's: both whole */
	gp_pattern_fill(back, small, 13);
	gp_pattern_fill(back + small, small, 17);
	for (size_t i = GP_SM_STRIPE; i < small; i += 2 * GP_SM_STRIPE)
		memcpy(back + i, back + small + i, small - i < GP_SM_STRIPE ? small - i : GP_SM_STRIPE);
	expect(!gp_sm_fill_split(&c, s, hd, small, 13, 17, &e) && !gp_cuda_sync(&c, s, &e) && !memcmp(h, back, small),
	       "a split fill: 13 in the even 512-byte stripes, 17 in the odd ones, as the CPU puts them");
	expect(!gp_sm_fill_split(&c, s, d, small, 19, 13, &e) && !gp_sm_copy_duplex(&c, s, hd, d, small, &e) &&
	       gcheck(&c, s, hd, h, small, 13, &want, &got) == -1 && gcheck(&c, s, d, NULL, small, 13, &want, &got) == -1,
	       "the duplex copy: host to GPU in the even stripes, GPU to host in the odd, both buffers whole");
	gp_cuda_free(&c, 0, d);
	gp_cuda_host_free(&c, h);
	gp_cuda_stream_free(&c, s);
	gp_cuda_close(&c);
	free(back);
	printf("%s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
