/* gpup2p copy — copy a pattern (new for every copy) along one path, or between every GPU pair, and
 * check every byte on the other side. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/pinmap.h"
#include "xfer_cli.h"

void help_copy(FILE *f)
{
	fprintf(f,
		"usage: gpup2p copy h2d|d2h|d2d|peer [--gpu N] [--to M] [--size S]\n"
		"              [--pinned|--pageable] [--iters K] [--numa N]\n"
		"              [--json|--csv|--jsonl]\n"
		"       gpup2p copy h2d|d2h --via map [--gpu N] [--size S] [--iters K]\n"
		"       gpup2p copy --all-pairs [--size S] [--iters K]\n\n"
		"Copy a pattern that differs for every byte and every copy, check every byte on\n"
		"the other side, and print the bandwidth (each copy timed on the GPU, median\n"
		"with min and max).\n"
		"  h2d, d2h     host memory to GPU N and back (host memory on the GPU's NUMA\n"
		"               node)\n"
		"  d2d          within GPU N\n"
		"  peer         GPU N to GPU M, with peer access when the GPUs allow it\n"
		"  --all-pairs  every GPU pair in both directions, peer access on where\n"
		"               possible: catches \"P2P is reported but the data lands in the\n"
		"               wrong place\" (one GPU: no pair, copies within it)\n\n");
	opts_help(f, &opts_copy);
	fprintf(f,
		"\nExit: 0 every byte right, 2 a wrong byte (offset, expected and found are\n"
		"printed) or a CUDA error, 64 usage, 69 CUDA not available or no GPU.\n");
}

struct copt {
	int kind, all, gpu, to, pinned, pageable, iters, numa, via, via_map; /* via: via_words' index */
	uint64_t size;
};

static const char *const kinds[] = { "h2d", "d2h", "d2d", "peer", NULL };

static int copy_path(const char *cmd, const char *arg, void *ctx)
{
	struct copt *o = ctx;

	for (int k = 0; o->kind < 0 && kinds[k]; k++)
		if (!strcmp(arg, kinds[k])) {
			o->kind = k;
			return 0;
		}
	return cli_usage(cmd, "unknown path '%s' (h2d, d2h, d2d or peer)", arg);
}

static const char *const via_words[] = { "map", "cuda", NULL };
static const char *const size_words[] = { "4K", "64K", "1M", "64M", "256M", "1G", NULL };

#define O(f) (long)offsetof(struct copt, f)
static const struct opt copy_opts[] = {
	{ "--all-pairs", NULL, NULL, OPT_FLAG, O(all), 1, .flags = OPT_NOHELP, .help = "every GPU pair in both directions" },
	{ "--gpu", NULL, "N", OPT_INDEX, O(gpu), .help = "the GPU (default 0, PCI bus order)" },
	{ "--to", NULL, "M", OPT_INDEX, O(to), .help = "peer: the destination GPU (default the next one)" },
	{ "--size", NULL, "S", OPT_SIZE, O(size), .values = size_words,
	  .help = "bytes per copy (default 64M; K/M/G = powers of 1024)" },
	{ "--pinned", NULL, NULL, OPT_FLAG, O(pinned), 1, .label = "--pinned, --pageable",
	  .help = "host memory for h2d/d2h (default pinned)" },
	{ "--pageable", NULL, NULL, OPT_FLAG, O(pageable), 1, .flags = OPT_NOHELP, .help = "pageable host memory" },
	{ "--iters", NULL, "K", OPT_COUNT, O(iters), .hi = 100000, .help = "copies, each with a new pattern (default 10)" },
	{ "--numa", NULL, "N", OPT_INDEX, O(numa), .help = "put host memory on NUMA node N" },
	{ "--via", NULL, "map", OPT_ENUM, O(via), .values = via_words,
	  .help = "h2d/d2h by the CPU through a gpup2p.ko mapping of the GPU memory\n"
		  "(needs the module: gpup2p enable), checked through CUDA;\ndefault: CUDA's copy engines" },
	{ 0 },
};
#undef O

static const struct opt_rule copy_rules[] = {
	{ OPT_ONE_OF, "h2d d2h d2d peer --all-pairs", NULL, NULL, NULL },
	{ OPT_EXCLUDES, "--all-pairs", "h2d d2h d2d peer", NULL, NULL },
	{ OPT_EXCLUDES, "--pinned", "--pageable", NULL, NULL },
	{ OPT_NEEDS, "--pinned --pageable", "h2d d2h", NULL, NULL },
	{ OPT_NEEDS, "--to", "peer", NULL, NULL },
	{ OPT_NOT_EQUAL, "--to", "--gpu", .why = "d2d copies within one GPU" },
	{ OPT_NEEDS, "--via=map", "h2d d2h", NULL, NULL },
	{ OPT_EXCLUDES, "--via=map", "--pinned --pageable --numa", .why = "map copies from the CPU's own buffer" },
	{ 0 },
};

const struct opts_cmd opts_copy = {
	.name = "copy", .opts = copy_opts, .rules = copy_rules, .col = 15, .help = help_copy,
	.globals = "--json, --csv, --jsonl, --no-header, -q: see gpup2p --help", .positional = copy_path,
	.words = kinds,
};

static void fill(struct gp_bench_row *r, const char *mode, const struct copt *o, int seq)
{
	memset(r, 0, sizeof(*r));
	r->mode = r->what = mode;
	r->floor = -1;
	r->spec.size = o->size;
	r->spec.iters = o->iters;
	r->spec.reps = 1;
	r->spec.each = 1;
	r->spec.numa = o->numa;
	r->spec.seed = 0x636f7079ULL + (uint64_t)seq * 104729;
}

int cmd_copy(struct cli *c, int argc, char **argv)
{
	struct copt o = { .via = 1, .kind = -1, .to = -1, .iters = 10, .numa = -1, .size = 64ULL << 20 };
	struct xfer_session s;
	struct gp_bench_row *rows;
	struct gp_err e = { 0 };
	int rc, n = 0;

	if ((rc = opts_parse(&opts_copy, c, argc, argv, &o)) >= 0)
		return rc;
	o.via_map = o.via == 0;
	if ((rc = xfer_open(c, &s)))
		return rc;
	if (o.gpu >= s.cuda.n || o.to >= s.cuda.n || (o.kind == GP_XFER_PEER && s.cuda.n < 2)) {
		int g = o.gpu >= s.cuda.n ? o.gpu : o.to, ng = s.cuda.n;

		xfer_close(c, &s);
		if (ng < 2 && o.kind == GP_XFER_PEER)
			return cli_usage("copy", "a peer copy needs two GPUs; CUDA sees %d", ng);
		return cli_usage("copy", "no GPU%d: CUDA sees %d GPU(s), numbered 0 to %d", g, ng, ng - 1);
	}
	rows = calloc((size_t)(s.cuda.n * s.cuda.n + 1), sizeof(*rows));
	if (!rows) {
		xfer_close(c, &s);
		fprintf(stderr, "gpup2p: out of memory\n");
		return EX_ERROR;
	}
	if (o.all && s.cuda.n < 2) {
		/* no pair: check what there is, copies within the one GPU */
		if (!c->quiet)
			fprintf(stderr, "gpup2p: copy --all-pairs: CUDA sees one GPU, so there are no pairs; "
				"checking copies within GPU0 (d2d)\n");
		fill(&rows[0], "d2d", &o, 0);
		rows[0].spec.kind = GP_XFER_D2D;
		n = 1;
	} else if (o.all) {
		for (int a = 0; a < s.cuda.n; a++)
			for (int b = 0; b < s.cuda.n; b++) {
				if (a == b)
					continue;
				fill(&rows[n], "peer", &o, n);
				rows[n].spec.kind = GP_XFER_PEER;
				rows[n].spec.gpu = a;
				rows[n].spec.peer_gpu = b;
				rows[n].spec.p2p = gp_cuda_can_peer(&s.cuda, a, b, &e) > 0;
				n++;
			}
	} else {
		static const char *const names[] = { "h2d", "d2h", "d2d", "peer" };

		fill(&rows[0], names[o.kind], &o, 0);
		rows[0].spec.kind = (enum gp_xfer_kind)o.kind;
		rows[0].spec.gpu = o.gpu;
		rows[0].spec.peer_gpu = o.to >= 0 ? o.to : (o.gpu + 1) % s.cuda.n;
		rows[0].spec.pinned = !o.pageable;
		rows[0].spec.p2p = o.kind == GP_XFER_PEER && gp_cuda_can_peer(&s.cuda, o.gpu, rows[0].spec.peer_gpu, &e) > 0;
		if (rows[0].spec.numa < 0 && (o.kind == GP_XFER_H2D || o.kind == GP_XFER_D2H))
			rows[0].spec.numa = s.numa[o.gpu];
		n = 1;
	}
	rc = -1;
	if (o.via_map) {
		struct gp_pinmap_spec ps = { .gpu = o.gpu, .size = o.size, .iters = o.iters, .isa = gp_wccopy_choose(),
					     .what = o.kind == GP_XFER_H2D ? GP_PM_WRITE : GP_PM_READ };
		struct gp_pinmap_result pr;

		rows[0].spec.via_map = 1;
		if (gp_pinmap_run(&s.cuda, &ps, &pr, &e)) {
			rc = 0;
		} else {
			int w = o.kind == GP_XFER_H2D;

			rows[0].done = 1;
			rows[0].res.gbps = (struct gp_stats){ .n = o.iters, .median = w ? pr.write_gbps : pr.read_gbps,
							      .min = w ? pr.write_min : pr.read_min,
							      .max = w ? pr.write_max : pr.read_max };
			rows[0].res.verified = pr.verified;
			rows[0].res.bad_offset = pr.bad_offset;
			rows[0].res.want = pr.want;
			rows[0].res.got = pr.got;
			rows[0].res.bad_copy = o.iters - 1;
			rows[0].res.host_node = -1;
		}
	}
	for (int i = 0; i < n && rc < 0 && !o.via_map; i++) {
		if (gp_xfer_run(&s.cuda, &rows[i].spec, &rows[i].res, &e))
			rc = i;
		else
			rows[i].done = 1;
	}
	xfer_print(c, &s, "copy", rows, n, rc >= 0 ? gp_err_exit_code(&e) : -1);
	if (rc >= 0)
		rc = cli_fail(&e);
	else
		rc = xfer_verdict(c, rows, n);
	free(rows);
	xfer_close(c, &s);
	return rc;
}
