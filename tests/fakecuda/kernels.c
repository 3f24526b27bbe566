/* The test double of libcuda: PTX modules and kernel launches. cuModuleLoadData knows the kernels
 * gpup2p's PTX declares by name; cuLaunchKernel runs them here, in C, on the virtual clock (see
 * fakecuda.c's head comment for the rates). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"
#include "gpup2p/smcopy.h"

/* kind: 1 copy, 2 chase, 3 bulk, 4 fill, 5 check, 6 duplex copy; smem_max: the dynamic shared memory a launch may ask for (48 KiB less the
 * kernel's static shared memory until cuFuncSetAttribute raises it, as in CUDA: gp_copy_bulk's is 128
 * bytes, as ptxas counts it) */
struct ffunc { int kind; int smem_max; };
/* a module's kernels, each its own function (an attribute set on one module's is not another's) */
struct fmodule {
	int copy, chase, bulk, fill, check, duplex;
	struct ffunc fn_copy, fn_chase, fn_bulk, fn_fill, fn_check, fn_duplex;
};

EXPORT gp_cu_result cuModuleLoadData(gp_cu_module *m, const void *image)
{
	const char *bad = getenv("FAKECUDA_BADPTX");
	struct fmodule *f;

	FAILPOINT("cuModuleLoadData");
	marker("cuModuleLoadData");
	const char *cc = getenv("FAKECUDA_CC");
	int bulk = strstr(image, ".entry gp_copy_bulk(") != NULL;

	if ((bad && *bad == '1') || !current || strncmp(image, ".version ", 9))
		return GP_CUDA_ERROR_INVALID_VALUE;
	if (bulk && ((bad && !strcmp(bad, "bulk")) || (cc && atoi(cc) < 9) || !strstr(image, ".target sm_90")))
		return GP_CUDA_ERROR_INVALID_VALUE;
	if (!(f = calloc(1, sizeof(*f))))
		return GP_CUDA_ERROR_OUT_OF_MEMORY;
	f->copy = strstr(image, ".entry gp_copy16(") != NULL;
	f->chase = strstr(image, ".entry gp_chase(") != NULL;
	f->bulk = bulk;
	f->fill = strstr(image, ".entry gp_fill(") != NULL;
	f->check = strstr(image, ".entry gp_check(") != NULL;
	f->duplex = strstr(image, ".entry gp_copy_duplex(") != NULL;
	f->fn_duplex = (struct ffunc){ 6, 49152 };
	f->fn_fill = (struct ffunc){ 4, 49152 };
	f->fn_check = (struct ffunc){ 5, 49152 };
	f->fn_copy = (struct ffunc){ 1, 49152 };
	f->fn_chase = (struct ffunc){ 2, 49152 };
	f->fn_bulk = (struct ffunc){ 3, 49152 - 128 };
	*m = (gp_cu_module)f;
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuModuleUnload(gp_cu_module m) { free(m); return GP_CUDA_SUCCESS; }

EXPORT gp_cu_result cuModuleGetFunction(gp_cu_function *fn, gp_cu_module m, const char *name)
{
	struct fmodule *f = (struct fmodule *)m;

	if (!strcmp(name, "gp_copy16") && f->copy)
		*fn = (gp_cu_function)&f->fn_copy;
	else if (!strcmp(name, "gp_chase") && f->chase)
		*fn = (gp_cu_function)&f->fn_chase;
	else if (!strcmp(name, "gp_copy_bulk") && f->bulk)
		*fn = (gp_cu_function)&f->fn_bulk;
	else if (!strcmp(name, "gp_fill") && f->fill)
		*fn = (gp_cu_function)&f->fn_fill;
	else if (!strcmp(name, "gp_check") && f->check)
		*fn = (gp_cu_function)&f->fn_check;
	else if (!strcmp(name, "gp_copy_duplex") && f->duplex)
		*fn = (gp_cu_function)&f->fn_duplex;
	else
		return GP_CUDA_ERROR_NOT_FOUND;
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuFuncSetAttribute(gp_cu_function fn, gp_cu_function_attribute a, int v)
{
	FAILPOINT("cuFuncSetAttribute");
	if (!fn || !current || a != GP_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || v < 0 || v > 227 * 1024 - 48)
		return GP_CUDA_ERROR_INVALID_VALUE;
	((struct ffunc *)fn)->smem_max = v;
	return GP_CUDA_SUCCESS;
}

/* Whether the GPU of stream s may load or store at device address d (host memory is mapped for all). */
static int reachable(struct fstream *s, gp_cu_dptr d)
{
	int g = dev_of(d);

	return g < 0 ? is_pinned(host_of(d)) : g == s->dev || peer_on[s->dev][g];
}

/* An SM copy's time on s's clock: 3 us plus n bytes at the rate of where src and dst are (h2d 27, d2h
 * 28, within a GPU 1500, to a peer 350 GB/s); host copies also take their turn on the host link. */
/* The SM rate (GB/s) of a copy from src to dst. */
static double sm_rate(gp_cu_dptr src, gp_cu_dptr dst)
{
	int ds = dev_of(src), dd = dev_of(dst);

	return ds < 0 ? 27 : dd < 0 ? 28 : ds == dd ? 1500 : 350;
}

static void sm_time(struct fstream *s, gp_cu_dptr src, gp_cu_dptr dst, size_t n)
{
	int ds = dev_of(src), dd = dev_of(dst);
	int peer = ds >= 0 && dd >= 0 && ds != dd;

	sched_copy(s, 3e-6 + (double)n / (sm_rate(src, dst) * 1e9), n, ds < 0 || dd < 0, peer ? ds : -1, peer ? dd : -1, 0);
}

/* gp_copy16: n16 words and the tail, `reps` times over (0 as 1); one launch's 3 us for all passes. */
static gp_cu_result run_copy(struct fstream *s, unsigned threads, void **p)
{
	gp_cu_dptr dst = *(gp_cu_dptr *)p[0], src = *(gp_cu_dptr *)p[1];
	uint64_t words = *(uint64_t *)p[2];
	unsigned tail = *(unsigned *)p[3], reps = *(unsigned *)p[4];
	size_t n = words * 16 + tail;
	if (!reachable(s, src) || !reachable(s, dst) || tail > 15 || tail > threads || ((dst | src) & 15))
		return GP_CUDA_ERROR_INVALID_VALUE;
	copy(host_of(dst), host_of(src), n, "sm");
	sm_time(s, src, dst, n * (reps ? reps : 1));
	for (unsigned k = 1; k < reps; k++) /* each pass is a copy in FAKECUDA_WINDOWS' count */
		work(s);
	return GP_CUDA_SUCCESS;
}

/* Each direction of a duplex SM copy at this share of its one-way rate: the H100s of
 * tests/perf/results/oracle-bench-h100x2-2026-11-26.log moved 42.3 GB/s each way in nvbandwidth's
 * bidirectional SM host tests, against 50.6 (h2d) and 52.3 (d2h) one way. */
#define DUPLEX_SHARE (42.3 / 51.45)

/* gp_copy_duplex as the GPU runs it (ptx_kernels.c): the even GP_SM_STRIPE-byte stripes from a to b, the
 * odd ones from b to a, the tail the way of its stripe; a block that is not a multiple of 64 threads is
 * refused (its warps would meet stripes of both parities). FAKECUDA_CORRUPT=duplex flips byte 4097 of b
 * (an even stripe: a's copy), =duplexback byte 4609 of a (an odd stripe: b's), =duplexhalf leaves the
 * odd stripes uncopied. Its time: 3 us plus the slower direction's bytes at DUPLEX_SHARE of its SM
 * rate; all n bytes take their turn on the host link. */
static gp_cu_result run_duplex(struct fstream *s, unsigned block, unsigned threads, void **p)
{
	gp_cu_dptr a = *(gp_cu_dptr *)p[0], b = *(gp_cu_dptr *)p[1];
	uint64_t words = *(uint64_t *)p[2];
	unsigned tail = *(unsigned *)p[3];
	size_t n = words * 16 + tail, ab = 0, ba = 0;
	const char *bad = getenv("FAKECUDA_CORRUPT");
	unsigned char *pa, *pb;
	double t;

	if (!reachable(s, a) || !reachable(s, b) || tail > 15 || tail > threads || ((a | b) & 15) || block % 64)
		return GP_CUDA_ERROR_INVALID_VALUE;
	pa = host_of(a);
	pb = host_of(b);
	for (size_t o = 0; o < n; o += GP_SM_STRIPE) {
		size_t len = n - o < GP_SM_STRIPE ? n - o : GP_SM_STRIPE;

		if (!(o / GP_SM_STRIPE % 2))
			memcpy(pb + o, pa + o, len), ab += len;
		else if (!(bad && !strcmp(bad, "duplexhalf")))
			memcpy(pa + o, pb + o, len), ba += len;
	}
	if (bad && !strcmp(bad, "duplex") && n > 4097)
		pb[4097] ^= 0xff;
	if (bad && !strcmp(bad, "duplexback") && n > 4609)
		pa[4609] ^= 0xff;
	t = (double)ab / (DUPLEX_SHARE * sm_rate(a, b) * 1e9);
	if ((double)ba / (DUPLEX_SHARE * sm_rate(b, a) * 1e9) > t)
		t = (double)ba / (DUPLEX_SHARE * sm_rate(b, a) * 1e9);
	sched_copy(s, 3e-6 + t, n, dev_of(a) < 0 || dev_of(b) < 0, -1, -1, 0);
	return GP_CUDA_SUCCESS;
}

/* gp_copy_bulk as the GPU runs it: the chunks come from the counter at ctr, numbered from its value at
 * launch (a counter left above 0 skips chunks, as on the GPU); the blocks' last ask past the end puts it
 * back to 0 only when it was the (nch + grid - 1)th; then the rest. */
static gp_cu_result run_bulk(struct fstream *s, unsigned grid, void **p)
{
	gp_cu_dptr dst = *(gp_cu_dptr *)p[0], src = *(gp_cu_dptr *)p[1], ctr = *(gp_cu_dptr *)p[4];
	uint64_t nch = *(uint64_t *)p[2], rem = *(uint64_t *)p[3], v, asks;
	const char *bad = getenv("FAKECUDA_CORRUPT");
	size_t n = nch * GP_SM_BULK_CHUNK + rem, from;

	if (!reachable(s, src) || !reachable(s, dst) || dev_of(ctr) != s->dev || (ctr & 7) || rem >= GP_SM_BULK_CHUNK ||
	    ((dst | src) & 15))
		return GP_CUDA_ERROR_INVALID_VALUE;
	memcpy(&v, host_of(ctr), 8);
	from = (v < nch ? v : nch) * GP_SM_BULK_CHUNK;        /* the chunks not skipped, then the rest */
	copy((char *)host_of(dst) + from, (char *)host_of(src) + from, n - from, "sm");
	asks = (v < nch ? nch - v : 0) + grid;
	v = v + asks - 1 == nch + grid - 1 && !(bad && !strcmp(bad, "bulkreset")) ? 0 : v + asks;
	memcpy(host_of(ctr), &v, 8);
	sm_time(s, src, dst, n);
	return GP_CUDA_SUCCESS;
}

/* A peer chase's ns per load on each SM of GPU 0, recorded on 2x H200 (results/chase-sm-h200x2-*.txt:
 * the SMs nearer the NVLink ports ~50 ns sooner); a one-block launch ran on SM 124 there. */
static const unsigned short peer_ns[132] = {
	850, 850, 800, 800, 799, 799, 799, 799, 850, 850, 850, 850, 851, 851, 800, 800,
	852, 852, 801, 801, 801, 801, 801, 801, 852, 852, 851, 851, 851, 851, 801, 801,
	854, 854, 806, 806, 803, 803, 803, 803, 854, 854, 853, 853, 856, 856, 806, 806,
	848, 848, 797, 797, 797, 797, 797, 797, 848, 848, 847, 847, 848, 848, 798, 798,
	799, 799, 798, 798, 798, 798, 849, 849, 849, 849, 849, 849, 799, 799, 800, 800,
	800, 800, 800, 800, 851, 851, 850, 850, 853, 853, 803, 803, 795, 795, 794, 794,
	794, 794, 845, 845, 845, 845, 846, 846, 795, 795, 796, 796, 796, 796, 796, 796,
	847, 847, 846, 846, 846, 846, 796, 796, 850, 850, 800, 800, 849, 849, 851, 851,
	845, 845, 847, 847,
};
#define LONE_SM 124

/* gp_chase(start, hops, out, block): block `block` of the grid chases. Host memory: 1000 ns a load on
 * any SM. A peer's: block b of a grid of g on the recorded SM b * 132 / g, scaled so that the mean over
 * the grid's blocks is 700 ns; a lone block on a GPU of several SMs (FAKECUDA_SMS) on LONE_SM,
 * scaled by the mean of all 132 (721 ns).
 * FAKECUDA_CORRUPT=chase: every launch stops one load short; =chase-batch: only blocks 1 and up (the
 * warm-up, on block 0, passes). */
static gp_cu_result run_chase(struct fstream *s, unsigned grid, void **p)
{
	gp_cu_dptr at = *(gp_cu_dptr *)p[0], out = *(gp_cu_dptr *)p[2];
	uint64_t hops = *(uint64_t *)p[1], done[2], sum = 0;
	const char *c = getenv("FAKECUDA_CORRUPT"), *sms = getenv("FAKECUDA_SMS");
	int lone = grid == 1 && (!sms || atoi(sms) > 1);    /* one block on a GPU of many SMs */
	unsigned block = *(unsigned *)p[3], sm = lone ? LONE_SM : (unsigned)((uint64_t)block * 132 / grid);
	unsigned n = lone ? 132 : grid;
	int where = dev_of(at);

	if (block >= grid)
		return GP_CUDA_SUCCESS;                   /* no block chases: nothing written */
	if (c && (!strcmp(c, "chase") || (!strcmp(c, "chase-batch") && block)) && hops > 1)
		hops--;
	for (uint64_t k = 0; k < hops; k++) {
		if (!reachable(s, at))
			return GP_CUDA_ERROR_INVALID_VALUE;   /* an illegal address, as the GPU would fault */
		memcpy(&at, host_of(at), 8);
	}
	for (unsigned i = 0; i < n; i++)
		sum += peer_ns[lone ? i : (uint64_t)i * 132 / grid];
	done[0] = at;
	done[1] = (uint64_t)((double)*(uint64_t *)p[1] * (where < 0 ? 1000 : 700.0 * n * peer_ns[sm] / (double)sum) +
			     0.5);
	memcpy(host_of(out), done, sizeof(done));
	sched_copy(s, (double)done[1] * 1e-9, 0, 0, -1, -1, 0);
	return GP_CUDA_SUCCESS;
}

/* The pattern kernels' word i (ptx_verify.c): splitmix64's finaliser of i ^ key, computed here on its
 * own (not libcore's), as the GPU does. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* gp_fill and gp_check: the nw words, then the tail bytes of word nw (fill: with key2 in place of key
 * in the odd stripes of GP_SM_STRIPE bytes, gp_sm_fill_split's halves). check: count the wrong words (and
 * tail bytes) into out[0] and put the first one's index into out[1] when it is below (the atomics). They
 * run on the stream's clock: 3 us plus their bytes at the rate of where buf is, as an SM copy. */
static gp_cu_result run_pattern(struct fstream *s, int check, unsigned threads, void **p)
{
	gp_cu_dptr buf = *(gp_cu_dptr *)p[0], out = check ? *(gp_cu_dptr *)p[4] : 0;
	uint64_t nw = *(uint64_t *)p[1], key = *(uint64_t *)p[3], key2 = check ? key : *(uint64_t *)p[4];
	uint64_t bad = 0, first = ~0ULL, res[2];
	unsigned tail = *(unsigned *)p[2];
	unsigned char *b = host_of(buf);

	if (!reachable(s, buf) || (buf & 7) || tail > 7 || tail > threads || (check && (dev_of(out) != s->dev || (out & 7))))
		return GP_CUDA_ERROR_INVALID_VALUE;
	for (uint64_t i = 0; i <= nw; i++) {
		uint64_t w = mix(i ^ (i * 8 / GP_SM_STRIPE % 2 ? key2 : key));
		int wrong = 0;

		for (unsigned k = 0; k < (i < nw ? 8 : tail); k++) {
			unsigned char x = (unsigned char)(w >> (8 * k));

			if (!check)
				b[8 * i + k] = x;
			else if (b[8 * i + k] != x)
				wrong += i < nw ? !wrong : 1;     /* a word counts once, a tail byte each */
		}
		if (wrong) {
			bad += (uint64_t)wrong;
			first = first < i ? first : i;
		}
	}
	if (check && bad) {
		memcpy(res, host_of(out), sizeof(res));
		res[0] += bad;
		res[1] = res[1] < first ? res[1] : first;
		memcpy(host_of(out), res, sizeof(res));
	}
	sm_time(s, buf, buf, nw * 8 + tail);
	return GP_CUDA_SUCCESS;
}

EXPORT gp_cu_result cuLaunchKernel(gp_cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				   unsigned bz, unsigned shmem, gp_cu_stream st, void **params, void **extra)
{
	struct fstream *s = (struct fstream *)st;

	FAILPOINT("cuLaunchKernel");
	if (!f || !s || !params || extra || (int)shmem > ((struct ffunc *)f)->smem_max || !gx || !bx || bx > 1024 ||
	    gy != 1 || gz != 1 || by != 1 || bz != 1 || !current || current->dev != s->dev)
		return GP_CUDA_ERROR_INVALID_VALUE;
	work(s);
	if (((struct ffunc *)f)->kind != 2) {
		static const char *const names[] = { "", "gp_copy16", "", "gp_copy_bulk", "gp_fill", "gp_check",
						     "gp_copy_duplex" };

		marker(names[((struct ffunc *)f)->kind]);
	}
	if (((struct ffunc *)f)->kind == 6)
		return shmem ? GP_CUDA_ERROR_INVALID_VALUE : run_duplex(s, bx, gx * bx, params);
	if (((struct ffunc *)f)->kind >= 4)
		return shmem ? GP_CUDA_ERROR_INVALID_VALUE : run_pattern(s, ((struct ffunc *)f)->kind == 5, gx * bx, params);
	if (((struct ffunc *)f)->kind == 1)
		return shmem ? GP_CUDA_ERROR_INVALID_VALUE : run_copy(s, gx * bx, params);
	if (((struct ffunc *)f)->kind == 3)
		return bx != GP_SM_BULK_BLOCK || shmem != GP_SM_BULK_SMEM ? GP_CUDA_ERROR_INVALID_VALUE : run_bulk(s, gx, params);
	if (shmem)
		return GP_CUDA_ERROR_INVALID_VALUE;
	if (bx != 1)
		return GP_CUDA_ERROR_INVALID_VALUE;
	return run_chase(s, gx, params);
}
