/* Unit tests (no GPU): statistics, sizes and sweeps, thresholds, the verification pattern, the bench
 * plan, CPU lists. */
#include <errno.h>
#include <math.h>

#include "gpup2p/bench_plan.h"
#include "gpup2p/linkcap.h"
#include "gpup2p/numa.h"
#include "unit.h"

static struct gp_err plan_err; /* gp_bench_plan's account of a refusal */

static void stats_tests(void)
{
	double odd[] = { 5, 1, 4, 2, 3 }, even[] = { 10, 40, 20, 30 }, one[] = { 7 };
	double many[200];
	struct gp_stats s;

	gp_stats_compute(odd, 5, &s);
	CHECK(s.n == 5 && s.min == 1 && s.max == 5 && s.median == 3 && s.p99 == 5, "stats of 5 values: min 1 median 3 max 5");
	gp_stats_compute(even, 4, &s);
	CHECK(s.median == 25 && s.min == 10 && s.max == 40, "even count: median is the mean of the middle two (25)");
	gp_stats_compute(one, 1, &s);
	CHECK(s.median == 7 && s.p99 == 7 && s.min == 7, "one value");
	gp_stats_compute(odd, 0, &s);
	CHECK(s.n == 0 && s.median == 0, "no value: zeros");
	for (int i = 0; i < 200; i++)
		many[i] = 200 - i; /* 1..200 */
	gp_stats_compute(many, 200, &s);
	CHECK(s.p99 == 198 && s.median == 100.5, "p99 of 1..200 is 198 (nearest rank), median 100.5");
}

static void size_tests(void)
{
	static const struct { const char *in; uint64_t want; } ok[] = {
		{ "1", 1 }, { "4096", 4096 }, { "4K", 4096 }, { "4k", 4096 }, { "64KiB", 65536 }, { "256M", 256ULL << 20 },
		{ "1G", 1ULL << 30 }, { "1GB", 1ULL << 30 }, { "1T", 1ULL << 40 },
	};
	static const char *const bad[] = { "", "0", "-1", "1.5G", "1X", "G", "1Gx", "1 G", "0x10" };
	char buf[32];
	uint64_t v, sw[GP_SWEEP_MAX];
	int n;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECK(gp_size_parse(ok[i].in, &v) == 0 && v == ok[i].want, "size '%s' = %llu", ok[i].in,
		      (unsigned long long)ok[i].want);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(gp_size_parse(bad[i], &v) == -EINVAL, "size '%s' refused", bad[i]);
	CHECK(gp_size_parse("2T", &v) == -ERANGE && gp_size_parse("99999999999999999999", &v) == -ERANGE,
	      "sizes above 1T: out of range");
	CHECK_STR(gp_size_str(256ULL << 20, buf, sizeof(buf)), "256M", "256 MiB prints 256M");
	CHECK_STR(gp_size_str(1536, buf, sizeof(buf)), "1536", "1536 has no exact unit above bytes");
	CHECK_STR(gp_size_str(3ULL << 30, buf, sizeof(buf)), "3G", "3 GiB prints 3G");

	n = gp_size_sweep(4096, 65536, 2, sw, GP_SWEEP_MAX);
	CHECK(n == 5 && sw[0] == 4096 && sw[4] == 65536 && sw[2] == 16384, "sweep 4K..64K x2: 5 sizes");
	n = gp_size_sweep(1000, 5000, 2, sw, GP_SWEEP_MAX);
	CHECK(n == 4 && sw[2] == 4000 && sw[3] == 5000, "sweep that does not land on max ends with max");
	n = gp_size_sweep(100, 100, 2, sw, GP_SWEEP_MAX);
	CHECK(n == 1 && sw[0] == 100, "min == max: one size");
	n = gp_size_sweep(1, 1ULL << 40, 2, sw, 8);
	CHECK(n == -E2BIG && sw[7] == 128, "1..1T x2 is 41 sizes: more than 8 is refused, not cut at 8");
	n = gp_size_sweep(1, 1ULL << 40, 2, sw, 41);
	CHECK(n == 41 && sw[40] == 1ULL << 40, "1..1T x2 in 41 places: every size, the last one 1T");
	n = gp_size_sweep(1, 1ULL << 40, 1.1, sw, GP_SWEEP_MAX);
	CHECK(n > 64 && sw[n - 1] == 1ULL << 40, "a sweep of more than 64 sizes is whole (%d sizes, ends at 1T)", n);
	n = gp_size_sweep(10, 20, 1.01, sw, GP_SWEEP_MAX);
	CHECK(n > 2 && sw[n - 1] == 20 && sw[1] > sw[0], "factor 1.01 still grows by whole bytes (%d sizes)", n);
	CHECK(gp_size_sweep(10, 5, 2, sw, 4) == -EINVAL && gp_size_sweep(1, 5, 1, sw, 4) == -EINVAL,
	      "sweep: min > max or factor <= 1 refused");
}

static void threshold_tests(void)
{
	struct gp_threshold t[4];

	CHECK(gp_threshold_parse("48", gp_bench_threshold_modes, &t[0]) == 0 && !t[0].mode[0] && t[0].gbps == 48,
	      "threshold 48: every mode");
	CHECK(gp_threshold_parse("p2p=335.5", gp_bench_threshold_modes, &t[1]) == 0 && !strcmp(t[1].mode, "p2p") &&
	      t[1].gbps == 335.5, "threshold p2p=335.5");
	CHECK(gp_threshold_parse("latency=3", gp_bench_threshold_modes, &t[2]) == -EINVAL, "no threshold on latency");
	CHECK(gp_threshold_parse("h2d=", gp_bench_threshold_modes, &t[2]) == -EINVAL &&
	      gp_threshold_parse("h2d=-1", gp_bench_threshold_modes, &t[2]) == -EINVAL &&
	      gp_threshold_parse("=5", gp_bench_threshold_modes, &t[2]) == -EINVAL &&
	      gp_threshold_parse("fast", gp_bench_threshold_modes, &t[2]) == -EINVAL &&
	      gp_threshold_parse("0", gp_bench_threshold_modes, &t[2]) == -EINVAL, "malformed thresholds refused");
	CHECK(gp_threshold_for(t, 2, "p2p") == 335.5 && gp_threshold_for(t, 2, "h2d") == 48 &&
	      gp_threshold_for(t, 0, "h2d") == -1, "the mode's own floor wins over the generic one");
	CHECK(gp_gbps(1000000000, 1000) == 1.0 && gp_gbps(5, 0) == 0, "GB/s = 1e9 bytes per second");
}

static void pattern_tests(void)
{
	static uint8_t a[4099], b[4099];
	uint8_t want = 0, got = 0;
	int same_pos = 0, same_seed = 0;

	gp_pattern_fill(a, sizeof(a), 1);
	gp_pattern_fill(b, sizeof(b), 2);
	for (size_t i = 0; i + 1 < sizeof(a); i++) {
		same_pos += a[i] == a[i + 1];
		same_seed += a[i] == b[i];
	}
	CHECK(same_pos < 64 && same_seed < 64, "pattern differs byte to byte (%d equal neighbours) and seed to seed (%d)",
	      same_pos, same_seed);
	CHECK(gp_pattern_check(a, sizeof(a), 1, &want, &got) == -1, "pattern checks against its own seed");
	CHECK(gp_pattern_check(a, sizeof(a), 2, &want, &got) == 0, "another seed fails at byte 0");
	a[4097] ^= 0x10;
	CHECK(gp_pattern_check(a, sizeof(a), 1, &want, &got) == 4097 && (want ^ got) == 0x10,
	      "a flipped bit in the tail is found with expected and found values");
	a[4097] ^= 0x10;
	a[3] = (uint8_t)~a[3];
	CHECK(gp_pattern_check(a, sizeof(a), 1, &want, &got) == 3, "first bad byte reported (3)");
	gp_pattern_fill(b, 5, 1);
	CHECK(gp_pattern_check(b, 5, 1, &want, &got) == -1 && gp_pattern_check(b, 5, 2, &want, &got) >= 0,
	      "sizes below one word work (and still tell seeds apart)");
}

/* A can_peer for the plan: GPUs 0 and 1 see each other, 2 sees nobody. */
static int peer_01(void *ctx, int a, int b)
{
	(void)ctx;
	return a != b && a < 2 && b < 2;
}

static int count(const struct gp_bench_row *r, int n, const char *mode, int skipped)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += !strcmp(r[i].mode, mode) && (skipped < 0 || (r[i].skip != NULL) == skipped);
	return k;
}

static void plan_tests(void)
{
	int numa[3] = { 0, 1, -1 };
	struct gp_bench_opts o = { .modes = GP_BENCH_ALL, .gpus = (const int[]){ 0, 1, 2 }, .ngpus = 3, .sizes = (const uint64_t[]){ 1 << 20, 1 << 22 },
				   .nsizes = 2, .lat_size = 4, .iters = 10, .reps = 5, .lat_iters = 1000, .lat_reps = 5,
				   .mem = GP_MEM_PINNED | GP_MEM_PAGEABLE, .numa = -1, .gpu_numa = numa,
				   .can_peer = peer_01 };
	struct gp_bench_row *r;
	struct gp_threshold t[2];
	int n = gp_bench_plan(&o, &r, &plan_err);

	/* h2d: 3 GPUs x 2 memories x 2 sizes = 12, d2h 12; d2d: 3 GPUs x 2 sizes = 6; p2p: 6 ordered pairs x
	 * on/off x write/read x 2 sizes = 48; bidir: 3 pairs x on/off x 2 sizes = 12; latency: 3 x (h2d, d2h)
	 * + 6 pairs = 12 */
	CHECK(n == 102 && count(r, n, "d2d", -1) == 6, "plan for 3 GPUs, 2 sizes: 102 rows, 6 d2d (%d)", n);
	CHECK(count(r, n, "h2d", -1) == 12 && count(r, n, "d2h", -1) == 12 && count(r, n, "p2p", -1) == 48 &&
	      count(r, n, "bidir", -1) == 12 && count(r, n, "latency", -1) == 12, "rows per mode 12/12/48/12/12");
	/* p2p on with GPU2 involved: pairs (0,2),(2,0),(1,2),(2,1) x write/read x 2 sizes = 16 skipped */
	CHECK(count(r, n, "p2p", 1) == 16 && count(r, n, "bidir", 1) == 4 && count(r, n, "latency", 1) == 4,
	      "rows needing peer access with GPU2 are kept, marked skipped (16 p2p, 4 bidir, 4 latency)");
	CHECK(r[0].spec.kind == GP_XFER_H2D && r[0].spec.pinned && r[0].spec.numa == 0 && r[4].spec.gpu == 1 &&
	      r[4].spec.numa == 1 && r[8].spec.numa == -1, "h2d rows: host memory on each GPU's own node");
	CHECK(r[n - 1].spec.size == 4 && r[n - 1].spec.iters == 1000 && r[n - 1].spec.host_timing,
	      "latency rows: small size, many copies, host timing");
	gp_threshold_parse("100", gp_bench_threshold_modes, &t[0]);
	gp_threshold_parse("h2d=50", gp_bench_threshold_modes, &t[1]);
	gp_bench_floors(r, n, t, 2);
	CHECK(r[0].floor == 50 && r[12].floor == 100 && r[n - 1].floor == -1, "floors: h2d 50, d2h generic 100, latency none");
	r[0].done = 1;
	r[0].res.gbps.median = 49.9;
	r[12].done = 1;
	r[12].res.gbps.median = 100;
	CHECK(gp_bench_below(&r[0]) && !gp_bench_below(&r[12]) && !gp_bench_below(&r[1]),
	      "below: 49.9 < 50 yes, 100 >= 100 no, not measured no");
	free(r);

	o.numa = 1;
	o.modes = GP_BENCH_H2D;
	o.mem = GP_MEM_PINNED;
	n = gp_bench_plan(&o, &r, &plan_err);
	CHECK(n == 6 && r[0].spec.numa == 1 && r[5].spec.numa == 1, "--numa overrides every GPU's node");
	free(r);
	o.modes = GP_BENCH_P2P | GP_BENCH_BIDIR;
	o.peer = 1;
	n = gp_bench_plan(&o, &r, &plan_err);
	CHECK(n == 24 + 6 && count(r, n, "p2p", -1) == 24, "--p2p on: only rows with peer access (%d)", n);
	free(r);
	o.modes = 0;
	CHECK(gp_bench_plan(&o, &r, &plan_err) == -EINVAL, "no mode: refused");
}

/* The row of a pattern plan with this mode, path, source and destination (-1 all/host), else NULL. */
static const struct gp_bench_row *find(const struct gp_bench_row *r, int n, const char *mode, const char *what, int a,
				       int b)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(r[i].mode, mode) && !strcmp(r[i].what, what) && r[i].spec.gpu == a &&
		    (r[i].spec.kind == GP_XFER_PEER ? r[i].spec.peer_gpu : -1) == b)
			return &r[i];
	return NULL;
}

static void pattern_plan_tests(void)
{
	struct gp_bench_opts o = { .modes = GP_BENCH_PATTERNS, .gpus = (const int[]){ 0, 1, 2 }, .ngpus = 3,
				   .sizes = (const uint64_t[]){ 1 << 20 }, .nsizes = 1, .iters = 10, .reps = 5,
				   .mem = GP_MEM_PAGEABLE, .numa = -1, .can_peer = peer_01, .engine = GP_ENGINE_SM };
	struct gp_bench_row *r;
	const struct gp_bench_row *x;
	struct gp_threshold t;
	int n = gp_bench_plan(&o, &r, &plan_err), groups_ok = 1;

	/* one2all: 3 hubs x (2 pairs + aggregate) = 9, all2one 9, all2host 3 + 1, host2all 4 */
	CHECK(n == 26 && count(r, n, "one2all", -1) == 9 && count(r, n, "all2one", -1) == 9 &&
	      count(r, n, "all2host", -1) == 4 && count(r, n, "host2all", -1) == 4, "patterns, 3 GPUs: 26 rows (%d)", n);
	for (int i = 0; i < n; i++)      /* a group: its rows adjacent, the last one the aggregate */
		groups_ok &= r[i].group > 0 && r[i].spec.sm && (i == n - 1 ? r[i].aggregate :
			     r[i].aggregate == (r[i + 1].group != r[i].group));
	CHECK(groups_ok && r[n - 1].group == 8, "8 groups, each ending with its aggregate, SM engine kept");
	x = find(r, n, "one2all", "p2p", 0, 1);
	CHECK(x && !x->skip && x->spec.p2p && !x->spec.read, "one2all GPU0->GPU1: peer write, measured");
	x = find(r, n, "one2all", "p2p", 0, 2);
	CHECK(x && x->skip, "one2all GPU0->GPU2: no peer access, skipped");
	x = find(r, n, "one2all", "aggregate", 2, -1);
	CHECK(x && x->skip && x->aggregate, "one2all from GPU2: no pair with peer access, aggregate skipped");
	x = find(r, n, "all2one", "aggregate", -1, 0);
	CHECK(x && !x->skip && x->spec.kind == GP_XFER_PEER, "all2one to GPU0: aggregate 'all'->GPU0 measured");
	x = find(r, n, "all2host", "d2h", 2, -1);
	CHECK(x && !x->skip && x->spec.pinned && x->spec.kind == GP_XFER_D2H,
	      "all2host GPU2->host: pinned (even with --pageable), no peer access needed");
	x = find(r, n, "host2all", "aggregate", -1, -1);
	CHECK(x && x->spec.kind == GP_XFER_H2D && x->spec.size == 1 << 20, "host2all aggregate: h2d, 'all'");
	gp_threshold_parse("host2all=40", gp_bench_threshold_modes, &t);
	gp_bench_floors(r, n, &t, 1);
	CHECK(r[n - 1].floor == 40 && r[n - 2].floor == -1, "--min-bw host2all=40: the aggregate only, not each pair");
	free(r);
	o.ngpus = 1;
	n = gp_bench_plan(&o, &r, &plan_err);
	CHECK(n == 1 + 1 + 2 + 2 && r[0].aggregate && r[0].skip && strstr(r[0].skip, "one GPU") && r[1].skip &&
	      !r[3].skip && !r[5].skip, "one GPU: one2all/all2one a skipped aggregate each, host patterns measured");
	free(r);
	o.modes = 1024;
	CHECK(gp_bench_plan(&o, &r, &plan_err) == -EINVAL, "unknown mode bit refused");
}

static int peer_all(void *ctx, int a, int b)
{
	(void)ctx;
	return a != b;
}

/* --op and --duplex in the plan; the ceilings of linkcap.h on a machine of three GPUs: 0 and 1 joined
 * by 18 Hopper NVLinks (18 x 26.5625 = 478.125 GB/s one way), GPU2 on PCIe Gen5 x16 only (16 x 3.938) */
static void ceiling_tests(void)
{
	struct gp_bench_opts o = { .modes = GP_BENCH_P2P | GP_BENCH_BIDIR | GP_BENCH_ONE2ALL | GP_BENCH_ALL2HOST,
				   .gpus = (const int[]){ 0, 1, 2 }, .ngpus = 3, .sizes = (const uint64_t[]){ 1 << 20 },
				   .nsizes = 1, .iters = 1, .reps = 1, .numa = -1, .peer = 1, .can_peer = peer_all,
				   .op = GP_OP_READ, .duplex = 1 };
	double pcie[] = { 63.008, 63.008, 63.008 }, rate[] = { 26.5625, 26.5625, 0 };
	int gen[] = { 5, 5, 5 }, width[] = { 16, 16, 16 }, port[] = { 18, 18, 0 };
	int links[] = { -1, 18, 0, 18, -1, 0, 0, 0, -1 };
	struct gp_linkcap L = { .n = 3, .pcie = pcie, .gen = gen, .width = width, .rate = rate, .port = port,
				.links = links };
	struct gp_bench_row *r;
	const struct gp_bench_row *x;
	int n = gp_bench_plan(&o, &r, &plan_err), reads = 1;
	char why[64];

	for (int i = 0; i < n; i++)
		if (r[i].spec.kind == GP_XFER_PEER)
			reads &= r[i].spec.read;
	CHECK(n > 0 && reads, "--op read: every p2p, bidir and one2all row pulls");
	x = find(r, n, "all2host", "d2h", 1, -1);
	CHECK(x && x->spec.bidir && r[n - 1].aggregate && r[n - 1].spec.bidir, "--duplex: all2host pairs and aggregate");
	x = find(r, n, "p2p", "p2p", 0, 1);
	CHECK(x && gp_linkcap_row(&L, r, n, (int)(x - r), why, sizeof(why)) == 478.125 &&
	      !strcmp(why, "18 NVLinks x 26.56 GB/s"), "p2p GPU0->GPU1: 18 NVLinks x 26.5625 = 478.125 (%s)", why);
	x = find(r, n, "p2p", "p2p", 2, 0);
	CHECK(x && gp_linkcap_row(&L, r, n, (int)(x - r), why, sizeof(why)) == 63.008 && !strcmp(why, "PCIe Gen5 x16"),
	      "p2p GPU2->GPU0, no NVLink: PCIe Gen5 x16 (%s)", why);
	x = find(r, n, "bidir", "bidir", 0, 1);
	CHECK(x && gp_linkcap_row(&L, r, n, (int)(x - r), why, sizeof(why)) == 956.25, "bidir: both ways, 956.25");
	x = find(r, n, "one2all", "aggregate", 0, -1);
	CHECK(x && fabs(gp_linkcap_row(&L, r, n, (int)(x - r), why, sizeof(why)) - 541.133) < 1e-9,
	      "one2all from GPU0: its NVLinks to GPU1 and PCIe to GPU2 together, 541.133");
	CHECK(fabs(gp_linkcap_row(&L, r, n, n - 1, why, sizeof(why)) - 3 * 63.008) < 1e-9, "all2host: 3 PCIe links");
	links[1] = links[3] = -1;
	x = find(r, n, "one2all", "aggregate", 0, -1);
	CHECK(x && gp_linkcap_row(&L, r, n, (int)(x - r), why, sizeof(why)) == 0, "a pair's links unknown: no ceiling");
	free(r);
	o = (struct gp_bench_opts){ .modes = GP_BENCH_ONE2ALL, .gpus = (const int[]){ 0, 1, 2 }, .ngpus = 3,
				    .sizes = (const uint64_t[]){ 1 << 20 }, .nsizes = 1, .iters = 1, .reps = 1, .numa = -1,
				    .can_peer = peer_all };
	links[1] = links[3] = 18, links[2] = links[6] = links[5] = links[7] = 18;   /* NV18 every pair */
	n = gp_bench_plan(&o, &r, &plan_err);
	CHECK(n == 9 && gp_linkcap_row(&L, r, n, 2, why, sizeof(why)) == 478.125 && !strcmp(why, "GPU0's 18 NVLinks x 26.56 GB/s"),
	      "one2all through NVSwitch: no more than the hub's own 18 NVLinks (%s)", why);
	r[2].done = 1;
	r[2].ceiling = 478.125;
	r[2].res.gbps.median = 525;
	CHECK(!gp_bench_impossible(&r[2], 0.10), "525 GB/s: within 10%% of 478.125");
	r[2].res.gbps.median = 1173.9;
	CHECK(gp_bench_impossible(&r[2], 0.10), "1173.9 GB/s out of one H200: impossible");
	free(r);
	CHECK(gp_linkcap_nvlink_rate(9, NULL) == 26.5625 && gp_linkcap_nvlink_rate(-1, "NVIDIA H200") == 26.5625 &&
	      gp_linkcap_nvlink_rate(7, "x") == 25 && gp_linkcap_nvlink_rate(-1, "Mystery GPU") == 53.125,
	      "per-link rates: Hopper by arch or name, Ampere 25, unknown the fastest");
}

static void cpulist_tests(void)
{
	cpu_set_t s;

	CHECK(gp_cpulist_parse("0-3,8,10-11\n", &s) == 0 && CPU_COUNT(&s) == 7 && CPU_ISSET(8, &s) && !CPU_ISSET(9, &s),
	      "cpulist 0-3,8,10-11");
	CHECK(gp_cpulist_parse("", &s) == -EINVAL && gp_cpulist_parse("3-1", &s) == -EINVAL &&
	      gp_cpulist_parse("a", &s) == -EINVAL && gp_cpulist_parse("1,,", &s) == -EINVAL, "malformed cpulists refused");
}

int main(void)
{
	stats_tests();
	size_tests();
	threshold_tests();
	pattern_tests();
	plan_tests();
	pattern_plan_tests();
	ceiling_tests();
	cpulist_tests();
	return unit_done();
}
