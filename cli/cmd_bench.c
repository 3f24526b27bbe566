/* gpup2p bench — bandwidth and latency of every copy path, verified, in pipeline-ready formats. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "xfer_cli.h"

void help_bench(FILE *f)
{
	fprintf(f,
		"usage: gpup2p bench [h2d|d2h|d2d|p2p|bidir|latency|all|PATTERN] [--gpu N]...\n"
		"              [--size S | --min S --max S [--factor F]] [--iters K] [--reps R]\n"
		"              [--pinned|--pageable] [--numa N] [--p2p on|off|both]\n"
		"              [--engine ce|sm|both | --sm] [--op write|read|both] [--duplex]\n"
		"              [--stride S] [--random] [--seed N] [--min-bw [MODE=]GBPS]...\n"
		"              [--no-verify] [--json|--csv|--jsonl]\n\n"
		"Measure copy bandwidth and latency with CUDA's copy engines: host to GPU and\n"
		"back (pinned and pageable host memory), GPU to GPU with peer access on and off,\n"
		"pushed (write) and pulled (read), both directions at once, and the latency of\n"
		"small copies. Each timed batch of copies is queued behind a gate the host opens\n"
		"once everything is queued, between two GPU events (copies running together:\n"
		"each timed on its GPU from the gate); the median of the repetitions is\n"
		"reported with min and max. The data of every path is checked once, after its\n"
		"timed batches, by the GPU that holds it. With --sm the GPU's own cores move\n"
		"the data (a kernel, 16-byte loads and stores, grid from the SM count), and\n"
		"latency is a pointer chase: one GPU thread following a chain of dependent\n"
		"loads through pinned host memory and through each peer GPU's memory, on\n"
		"each SM in turn (the figure is the mean over the SMs). Host memory is placed\n"
		"on the GPU's NUMA node (and the thread on its CPUs) unless --numa says.\n"
		"Defaults match nvbandwidth's (512 MiB, 16 copies, 3 batches).\n\n"
		"  MODE                   h2d, d2h, d2d (within a GPU), p2p, bidir, latency or\n"
		"                         all (default all)\n"
		"  PATTERN                copies running together, each pair and the aggregate\n"
		"                         (not in all): one2all (each GPU to every other),\n"
		"                         all2one (every other GPU to each), all2host, host2all\n"
		"                         (pinned host memory; peer access on)\n");
	opts_help(f, &opts_bench);
	fprintf(f,
		"\ngpup2p bench rdma ...: RDMA between a NIC and host or GPU memory\n"
		"(gpup2p bench rdma --help).\n"
		"Units: GB/s = 1e9 bytes/s; sizes K/M/G = powers of 1024; latency in us\n"
		"(microseconds): per copy, or per load with --sm.\n"
		"Exit: 0 ok, 1 a result below --min-bw, 2 wrong data, a CUDA error or a figure\n"
		"above what its links carry (a measurement error), 64 usage, 69 CUDA not\n"
		"available or no GPU.\n");
}

/* Defaults as nvbandwidth v0.8's (512 MiB buffers, a loop count of 16, 3 samples: the same work per
 * path, so that figures and wall time compare); latency keeps 5 repetitions. */
#define BENCH_SIZE (512ULL << 20)
#define BENCH_ITERS 16
#define BENCH_REPS 3
#define BENCH_LAT_REPS 5

struct opts {
	struct gp_bench_opts b;
	int *gpus;                      /* b.gpus (heap): the --gpu list, else every GPU */
	struct gp_threshold t[GP_THRESH_MAX];
	int nt;
	uint64_t size, min, max, sizes[GP_SWEEP_MAX];
	double factor;
	int size_set, iters_set, reps_set;
};

static int parse_mode(const char *a, int *modes)
{
	static const struct { const char *name; int bits; } m[] = {
		{ "h2d", GP_BENCH_H2D }, { "d2h", GP_BENCH_D2H }, { "d2d", GP_BENCH_D2D }, { "p2p", GP_BENCH_P2P },
		{ "bidir", GP_BENCH_BIDIR }, { "latency", GP_BENCH_LATENCY }, { "all", GP_BENCH_ALL },
		{ "one2all", GP_BENCH_ONE2ALL }, { "all2one", GP_BENCH_ALL2ONE }, { "all2host", GP_BENCH_ALL2HOST },
		{ "host2all", GP_BENCH_HOST2ALL },
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (!strcmp(a, m[i].name)) {
			*modes |= m[i].bits;
			return 1;
		}
	return 0;
}

static int mode_word(const char *cmd, const char *arg, void *ctx)
{
	struct opts *o = ctx;

	if (parse_mode(arg, &o->b.modes))
		return 0;
	return cli_usage(cmd, "unknown mode '%s' (h2d, d2h, d2d, p2p, bidir, latency, all, one2all, all2one, all2host "
			 "or host2all)", arg);
}

static int gpu_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	struct opts *o = ctx;
	int n, *g;

	(void)field;
	if (opts_index(cmd, opt->name, val, &n))
		return EX_USAGE_;
	for (int k = 0; k < o->b.ngpus; k++)
		if (o->gpus[k] == n)
			return cli_usage(cmd, "--gpu %d given twice", n);
	if (!(g = realloc(o->gpus, (size_t)(o->b.ngpus + 1) * sizeof(*g)))) {
		fprintf(stderr, "gpup2p: bench: out of memory\n");
		return EX_ERROR;
	}
	o->b.gpus = o->gpus = g;
	o->gpus[o->b.ngpus++] = n;
	return 0;
}

static int factor_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	(void)opt, (void)ctx;
	return xfer_factor_arg(cmd, val, field) ? EX_USAGE_ : 0;
}

static int numa_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	char *end;
	long n = strtol(val, &end, 10);

	(void)opt, (void)ctx;
	if (!*val || *end || n < 0 || n > 1023)
		return cli_usage(cmd, "--numa wants a NUMA node number, not '%s'", val);
	*(int *)field = (int)n;
	return 0;
}

static int min_bw_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	struct opts *o = ctx;

	(void)opt, (void)field;
	if (o->nt >= GP_THRESH_MAX)
		return cli_usage(cmd, "at most %d --min-bw options", GP_THRESH_MAX);
	if (gp_threshold_parse(val, gp_bench_threshold_modes, &o->t[o->nt]))
		return cli_usage(cmd, "--min-bw wants GBPS or MODE=GBPS (MODE: h2d, d2h, d2d, p2p, bidir, one2all, all2one, "
				 "all2host, host2all), not '%s'", val);
	o->nt++;
	return 0;
}

static int stride_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	uint64_t *stride = field;

	(void)ctx;
	if (opts_size(cmd, opt->name, val, stride))
		return EX_USAGE_;
	if (*stride % 8 || *stride > (1 << 30))
		return cli_usage(cmd, "--stride wants a multiple of 8 bytes up to 1G, like 128 or 4K, not '%s'", val);
	return 0;
}

static int seed_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	char *end;

	(void)opt, (void)ctx;
	errno = 0;
	*(uint64_t *)field = strtoull(val, &end, 0);
	if (!*val || *end || *val == '-' || errno)
		return cli_usage(cmd, "--seed wants a whole number, not '%s'", val);
	return 0;
}

static const char *const size_words[] = { "4K", "64K", "1M", "64M", "256M", "1G", NULL };
static const char *const p2p_words[] = { "on", "off", "both", NULL };
static const int p2p_vals[] = { 1, 2, 3 };
static const char *const engine_words[] = { "ce", "sm", "both", NULL };
static const int engine_vals[] = { GP_ENGINE_CE, GP_ENGINE_SM, GP_ENGINE_CE | GP_ENGINE_SM };
static const char *const op_words[] = { "write", "read", "both", NULL };
static const int op_vals[] = { GP_OP_WRITE, GP_OP_READ, GP_OP_WRITE | GP_OP_READ };
static const char *const stride_words[] = { "8", "64", "128", "4K", NULL };
static const char *const bw_words[] = { "h2d=", "d2h=", "d2d=", "p2p=", "bidir=", "one2all=", "all2one=", "all2host=",
					"host2all=", NULL };
static const char *const bench_modes[] = { "h2d", "d2h", "d2d", "p2p", "bidir", "latency", "all", "one2all", "all2one",
					   "all2host", "host2all", "rdma", NULL };

#define O(f) (long)offsetof(struct opts, f)
static const struct opt bench_opts[] = {
	{ "--gpu", NULL, "N", OPT_CALL, -1, .call = gpu_opt, .flags = OPT_REPEAT,
	  .help = "measure GPU N (repeatable; default every GPU, in PCI\nbus order)" },
	{ "--size", NULL, "S", OPT_SIZE, O(size), .values = size_words,
	  .help = "copy size (default 512M; latency alone: default 4;\nlatency --sm alone: the chain, default twice the L2\n"
		  "cache, 64M at least)" },
	{ "--min", NULL, "S", OPT_SIZE, O(min), .values = size_words, .label = "--min S, --max S",
	  .help = "sweep sizes from S to S, multiplying by --factor\n(default 2)" },
	{ "--max", NULL, "S", OPT_SIZE, O(max), .values = size_words, .flags = OPT_NOHELP, .help = "sweep sizes up to S" },
	{ "--factor", NULL, "F", OPT_CALL, O(factor), .call = factor_opt, .help = "sweep step, > 1" },
	{ "--iters", NULL, "K", OPT_COUNT, O(b.iters), .hi = 1000000,
	  .help = "copies per timed batch (default 16; latency alone:\n"
		  "1000; latency --sm: loads per batch, spread over the\nSMs, default 100000)" },
	{ "--reps", NULL, "R", OPT_COUNT, O(b.reps), .hi = 10000, .help = "timed batches (default 3; latency: 5)" },
	{ "--pinned", NULL, NULL, OPT_BITS, O(b.mem), GP_MEM_PINNED, .label = "--pinned, --pageable",
	  .help = "host memory for h2d/d2h (default both)" },
	{ "--pageable", NULL, NULL, OPT_BITS, O(b.mem), GP_MEM_PAGEABLE, .flags = OPT_NOHELP,
	  .help = "pageable host memory for h2d/d2h" },
	{ "--numa", NULL, "N", OPT_CALL, O(b.numa), .call = numa_opt, .help = "put host memory on NUMA node N for every GPU" },
	{ "--p2p", NULL, "on|off|both", OPT_ENUM, O(b.peer), .values = p2p_words, .ivals = p2p_vals,
	  .help = "p2p/bidir: with peer access, without (copies staged by\nthe driver), or both (default)" },
	{ "--engine", NULL, "ce|sm|both", OPT_ENUM, O(b.engine), .values = engine_words, .ivals = engine_vals,
	  .help = "copy engines (default), SMs, or both; --sm = --engine\nsm. SM copies: pinned host memory, peer access on" },
	{ "--sm", NULL, NULL, OPT_FLAG, O(b.engine), GP_ENGINE_SM, .flags = OPT_NOHELP, .help = "--engine sm" },
	{ "--op", NULL, "write|read|both", OPT_ENUM, O(b.op), .values = op_words, .ivals = op_vals,
	  .help = "p2p, bidir, one2all, all2one: copies queued on the\nsource GPU (write) or the destination (read)\n"
		  "(default: p2p both, the others write)" },
	{ "--duplex", NULL, NULL, OPT_FLAG, O(b.duplex), 1,
	  .help = "h2d, d2h, all2host, host2all: the opposite direction\nruns at the same time on each GPU; the figure is\n"
		  "the named direction's (--sm: one kernel copies both\nways, the figure is half the bytes moved both ways\n"
		  "per second), as nvbandwidth's bidirectional tests" },
	{ "--stride", NULL, "S", OPT_CALL, O(b.chain_stride), .call = stride_opt, .values = stride_words,
	  .help = "latency --sm: bytes between chain slots (default 128)" },
	{ "--random", NULL, NULL, OPT_FLAG, O(b.chain_random), 1, .label = "--random, --seed N",
	  .help = "latency --sm: slots in a random order drawn from N\n(default 1)" },
	{ "--seed", NULL, "N", OPT_CALL, O(b.chain_seed), .call = seed_opt, .flags = OPT_NOHELP,
	  .help = "latency --sm: the random order's seed" },
	{ "--min-bw", NULL, "[MODE=]GBPS", OPT_CALL, -1, .call = min_bw_opt, .values = bw_words, .flags = OPT_REPEAT,
	  .help = "floor for every bandwidth mode, or for one (h2d, d2h,\nd2d, p2p, bidir, or a PATTERN: its aggregate);\n"
		  "repeatable; a median below it exits 1" },
	{ "--verify", NULL, NULL, OPT_FLAG, O(b.no_verify), 0, .label = "--verify, --no-verify",
	  .help = "check the data once after the timed batches (default)\nor not" },
	{ "--no-verify", NULL, NULL, OPT_FLAG, O(b.no_verify), 1, .flags = OPT_NOHELP, .help = "do not check the data" },
	{ 0 },
};
#undef O

static const struct opt_rule bench_rules[] = {
	{ OPT_EXCLUDES, "--size", "--min --max", NULL, NULL },
	{ OPT_NEEDS, "--min", "--max", NULL, NULL },
	{ OPT_NEEDS, "--max", "--min", NULL, NULL },
	{ OPT_NEEDS, "--factor", "--min", NULL, NULL },
	{ OPT_NOT_ABOVE, "--min", "--max", NULL, NULL },
	{ OPT_NEEDS, "--op", "p2p bidir one2all all2one", NULL, NULL },
	{ OPT_NEEDS, "--duplex", "h2d d2h all2host host2all", NULL, NULL },
	{ OPT_NEEDS, "--stride --random --seed", "latency", NULL, NULL },
	{ OPT_NEEDS, "--stride --random --seed", "--engine=sm --engine=both", NULL, NULL },
	{ OPT_EXCLUDES, "--engine=sm", "--pageable", .when = "h2d|d2h !--pinned",
	  .why = "SM copies need pinned host memory; use --engine both" },
	{ OPT_EXCLUDES, "--engine=sm", "--p2p=off", .when = "p2p|bidir",
	  .why = "SM copies between GPUs need peer access; use --engine both" },
	{ 0 },
};

/* with no MODE, all; all is these */
static const char *const bench_implies[] = { "all: h2d d2h d2d p2p bidir latency", NULL };

const struct opts_cmd opts_bench = {
	.name = "bench", .opts = bench_opts, .rules = bench_rules, .col = 25, .help = help_bench,
	.globals = "--json, --csv, --jsonl, --no-header, -q, -v: see gpup2p --help", .positional = mode_word,
	.words = bench_modes, .word_default = "all", .word_implies = bench_implies,
};

/* Sizes and defaults once everything is parsed. 0 or 64 (printed). */
static int finish(struct opts *o)
{
	int lat_only = o->b.modes == GP_BENCH_LATENCY;

	if (!o->b.modes)
		o->b.modes = GP_BENCH_ALL;
	lat_only = o->b.modes == GP_BENCH_LATENCY;
	if (!o->b.mem)
		o->b.mem = GP_MEM_PINNED | GP_MEM_PAGEABLE;
	if (o->min) {
		int n = gp_size_sweep(o->min, o->max, o->factor ? o->factor : 2, o->sizes, GP_SWEEP_MAX);

		if (n == -E2BIG)
			return cli_usage("bench", "this sweep has more than %d sizes: use a larger --factor or a narrower "
					 "--min/--max", GP_SWEEP_MAX);
		if (n < 0)                      /* the rules and --factor's parser leave none */
			return cli_usage("bench", "no sweep from --min to --max by --factor");
		o->b.nsizes = n;
	} else {
		o->sizes[0] = o->size_set && !lat_only ? o->size : BENCH_SIZE;
		o->b.nsizes = 1;
	}
	o->b.sizes = o->sizes;
	o->b.lat_size = lat_only && o->size_set ? o->size : 4;
	o->b.chain_size = lat_only && o->size_set ? o->size : 0;   /* 0: from the L2 size, once CUDA is open */
	o->b.chase_hops = lat_only && o->iters_set ? o->b.iters : 100000;
	if (!o->b.chain_stride)
		o->b.chain_stride = 128;
	if ((o->b.engine & GP_ENGINE_SM) && o->b.chain_size && o->b.chain_size < 2 * o->b.chain_stride)
		return cli_usage("bench", "a chase chain of %llu bytes has no room for two slots of --stride %llu",
				 (unsigned long long)o->b.chain_size, (unsigned long long)o->b.chain_stride);
	o->b.lat_iters = lat_only && o->iters_set ? o->b.iters : 1000;
	o->b.lat_reps = o->reps_set ? o->b.reps : BENCH_LAT_REPS;
	if (!o->iters_set)
		o->b.iters = BENCH_ITERS;
	return 0;
}

static int can_peer(void *ctx, int a, int b)
{
	struct gp_err e = { 0 };

	return gp_cuda_can_peer(ctx, a, b, &e);
}

static int run_rows(struct cli *c, struct xfer_session *s, struct gp_bench_row *rows, int n)
{
	struct gp_err e = { 0 };

	for (int i = 0; i < n; i++) {
		struct gp_bench_row *r = &rows[i];

		if (r->group) {                 /* a pattern: the whole group at once */
			int k = i;

			while (!rows[k].aggregate)
				k++;
			if (c->verbose)
				fprintf(stderr, "gpup2p: bench %d-%d/%d: %s, %d copies together, %llu bytes each\n", i + 1, k + 1,
					n, r->mode, k - i, (unsigned long long)r->spec.size);
			if (gp_bench_pattern_run(&s->cuda, r, k - i + 1, &e)) {
				xfer_print(c, s, "bench", rows, i, gp_err_exit_code(&e));
				return cli_fail(&e);
			}
			i = k;
			continue;
		}
		if (r->skip)
			continue;
		if (c->verbose)
			fprintf(stderr, "gpup2p: bench %d/%d: %s %s GPU%d%s%d %llu bytes\n", i + 1, n, r->mode, r->what,
				r->spec.gpu, r->spec.kind == GP_XFER_PEER ? "->GPU" : "", r->spec.kind == GP_XFER_PEER ?
				r->spec.peer_gpu : 0, (unsigned long long)r->spec.size);
		if (gp_xfer_run(&s->cuda, &r->spec, &r->res, &e)) {
			xfer_print(c, s, "bench", rows, i, gp_err_exit_code(&e));
			return cli_fail(&e);
		}
		r->done = 1;
	}
	return -1;
}

static int bench(struct cli *c, struct opts *o, int argc, char **argv)
{
	struct xfer_session s;
	struct gp_bench_row *rows;
	struct gp_err e = { 0 };
	int rc, n;

	if ((rc = opts_parse(&opts_bench, c, argc, argv, o)) >= 0)
		return rc;
	o->size_set = !!opts_seen(&opts_bench, "--size");
	o->iters_set = !!opts_seen(&opts_bench, "--iters");
	o->reps_set = !!opts_seen(&opts_bench, "--reps");
	if ((rc = finish(o)))
		return rc;
	if ((rc = xfer_open(c, &s)))
		return rc;
	for (int i = 0; i < o->b.ngpus; i++)
		if (o->b.gpus[i] >= s.cuda.n) {
			int ng = s.cuda.n;

			xfer_close(c, &s);
			return cli_usage("bench", "no GPU%d: CUDA sees %d GPU(s), numbered 0 to %d in PCI bus order",
					 o->b.gpus[i], ng, ng - 1);
		}
	if (!o->b.ngpus) {
		if (!(o->gpus = malloc((size_t)s.cuda.n * sizeof(int)))) {
			xfer_close(c, &s);
			fprintf(stderr, "gpup2p: bench: out of memory\n");
			return EX_ERROR;
		}
		for (int i = 0; i < s.cuda.n; i++)
			o->gpus[o->b.ngpus++] = i;
		o->b.gpus = o->gpus;
	}
	o->b.gpu_numa = s.numa;
	o->b.can_peer = can_peer;
	o->b.ctx = o->b.cuda = &s.cuda;
	if ((n = gp_bench_plan(&o->b, &rows, &e)) < 0) {
		xfer_close(c, &s);
		return cli_fail(&e);
	}
	gp_bench_floors(rows, n, o->t, o->nt);
	rc = run_rows(c, &s, rows, n);
	xfer_ceilings(c, &s, rows, n);
	if (rc < 0) {
		xfer_print(c, &s, "bench", rows, n, -1);
		rc = xfer_verdict(c, rows, n);
	}
	free(rows);
	xfer_close(c, &s);
	return rc;
}

int cmd_bench(struct cli *c, int argc, char **argv)
{
	struct opts o = { .b = { .numa = -1, .iters = BENCH_ITERS, .reps = BENCH_REPS, .seed = 0x6770753270ULL, .chain_seed = 1 } };
	int rc;

	if (argc > 1 && !strcmp(argv[1], "rdma"))
		return cmd_bench_rdma(c, argc - 1, argv + 1);
	rc = bench(c, &o, argc, argv);

	free(o.gpus);
	return rc;
}
