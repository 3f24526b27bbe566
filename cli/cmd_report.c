/* gpup2p report — merge many nodes' doctor and bench JSON (libcore/report/report.c) and print the fleet view. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpup2p/bench.h"
#include "gpup2p/report.h"

void help_report(FILE *f)
{
	fprintf(f,
		"usage: gpup2p report [FILE|DIR|-]... [--expect HOSTLIST] [--below FRACTION]\n"
		"              [-v] [--json|--csv]\n"
		"       gpup2p report [FILE|DIR|-]... --baseline\n\n"
		"Merges the doctor and bench JSON output of many nodes and folds identical\n"
		"results into host ranges (node[01-12,14]), as dshbak -c does. Input: files;\n"
		"directories with one file per host, named after it (as clush writes its output\n"
		"directory); stdin (\"-\", or no argument) in the \"host: line\" form of pdsh, clush\n"
		"and labelled srun, or plain JSON lines with a \"host\" member. A document may\n"
		"span several lines (indented JSON). Lines and files that are no such JSON are\n"
		"listed as malformed (source, line, host, why) and do not stop the report.\n\n");
	opts_help(f, &opts_report);
	fprintf(f,
		"\nExit: 0 every node clean, 1 a warning, a missing node, a figure below,\n"
		"malformed input or a doctor that could not run, 2 an error finding on some\n"
		"node, 64 usage.\n");
}

struct rep_opts {
	int baseline;
	const char *expect;
	double below;
	const char **in;
	int nin;
};

/* Text another host sent, safe to print (gp_out_escape): control characters, C1, bidi overrides and
 * bytes that are no UTF-8 escaped. NULL stays NULL. Up to 16 results live at once (one printf, one row). */
static const char *safe(const char *s)
{
	static struct gp_buf ring[16];
	static unsigned next;
	struct gp_buf *b = &ring[next++ % 16];

	if (!s)
		return NULL;
	gp_buf_reset(b);
	return gp_out_escape(b, s) ? "(out of memory)" : gp_buf_str(b);
}

static int below_opt(const char *cmd, const struct opt *opt, const char *val, void *field, void *ctx)
{
	double *below = field;
	char *end;

	(void)opt, (void)ctx;
	errno = 0;
	*below = strtod(val, &end);
	if (!*val || *end || errno || !(*below > 0 && *below <= 1))
		return cli_usage(cmd, "--below takes a fraction of the median, 0 < FRACTION <= 1 (like 0.9), not '%s'",
				 safe(val));
	return 0;
}

static int input(const char *cmd, const char *arg, void *ctx)
{
	struct rep_opts *o = ctx;

	(void)cmd;
	o->in[o->nin++] = arg;
	return 0;
}

static const char *const below_words[] = { "0.9", "0.8", "0.5", NULL };

#define O(f) (long)offsetof(struct rep_opts, f)
static const struct opt report_opts[] = {
	{ "--expect", NULL, "HOSTLIST", OPT_STR, O(expect), .needs = "a host list, like node[01-64]",
	  .help = "the nodes that should have answered (node[01-64],login1):\nlist those that sent nothing as missing" },
	{ "--below", NULL, "FRACTION", OPT_CALL, O(below), .call = below_opt, .values = below_words,
	  .help = "flag a node's bench figure below FRACTION x the fleet\nmedian of the same mode, path, src, dst, size, "
		  "memory,\np2p, op and engine (default 0.9; 0 < FRACTION <= 1)" },
	{ "--baseline", NULL, NULL, OPT_FLAG, O(baseline), 1,
	  .help = "print instead the expectation the majority of the hosts'\ndoctor facts agree on, in gpup2p doctor "
		  "--expect's format,\nthe hosts that deviate as comments (# deviates: ...);\nexit 0 none deviates, 1 some "
		  "do, 3 no facts in the input" },
	{ "--verbose", "-v", NULL, OPT_INC, -1, .flags = OPT_DOC, .help = "also fold the info findings" },
	{ 0 },
};
#undef O

static const struct opt_rule report_rules[] = {
	{ OPT_REFUSES, "--jsonl", .why = "it prints text, --json or --csv" },
	{ OPT_EXCLUDES, "--baseline", "--json --csv", .why = "--baseline prints doctor --expect's format" },
	{ 0 },
};

const struct opts_cmd opts_report = {
	.name = "report", .opts = report_opts, .rules = report_rules, .col = 21, .help = help_report,
	.globals = "--json, --csv, --no-header, -q: see gpup2p --help", .positional = input, .word_flags = OPT_FILE,
};

/* safe(s), or "-" for NULL. */
static const char *nz(const char *s)
{
	return s ? safe(s) : "-";
}

static const char *exit_meaning(int s)
{
	switch (s) {
	case EX_UNKNOWN: return "could not run on this data";
	case EX_USAGE_: return "usage error";
	case EX_UNAVAIL: return "facility unavailable";
	case EX_PERM: return "permission denied";
	default: return "unexpected status";
	}
}

/* The bench figures' table built into t (freed on failure); 0, or -ENOMEM. */
static int bench_table(const struct gp_report *r, struct gp_table *t)
{
	const char *hdr[] = { "MODE", "PATH", "SRC", "DST", "SIZE", "MEMORY", "P2P", "OP", "ENGINE", "HOSTS", "MEDIAN" };
	char size[32], med[32], cnt[16];
	int rc;

	if ((rc = gp_table_init(t, 11)))
		return rc;
	rc = gp_table_row(t, hdr);
	for (int i = 0; !rc && i < r->nbench; i++) {
		const struct gp_report_bench *b = &r->bench[i];
		const char *row[11] = { nz(b->mode), nz(b->path), nz(b->src), nz(b->dst),
					gp_size_str(b->size, size, sizeof(size)), nz(b->memory), nz(b->p2p), nz(b->op),
					nz(b->engine), cnt, med };

		snprintf(cnt, sizeof(cnt), "%d", b->nv);
		snprintf(med, sizeof(med), "%.2f", b->median);
		rc = gp_table_row(t, row);
	}
	if (rc)
		gp_table_free(t);
	return rc;
}

/* The table; 0, or EX_ERROR when out of memory (message printed). */
static int print_table(const struct cli *c, const struct gp_report *r)
{
	static const char *const title[] = { "errors", "warnings", "unknown", "info" };
	struct gp_report_totals tot;
	struct gp_table bt;
	char size[32];

	gp_report_totals(r, &tot);
	if (r->nbench && bench_table(r, &bt)) {   /* built first: out of memory prints nothing but the error */
		fprintf(stderr, "gpup2p: out of memory\n");
		return EX_ERROR;
	}

	if (!c->quiet)
		printf("gpup2p report: %d host%s answered (%d with doctor output)%s\n", r->nhost, r->nhost == 1 ? "" : "s",
		       r->ndoctor, r->nhost ? "" : ": nothing read");
	for (int s = 0; s < 4; s++) {
		if (!tot.groups[s])
			continue;
		printf("\n%s (%d)\n", title[s], tot.groups[s]);
		for (int i = 0; i < r->ngroup; i++) {
			const struct gp_report_group *g = &r->group[i];

			if (g->sev != s)
				continue;
			printf("  %s  %s (%d)\n      %s: %s\n", safe(g->id), g->range, g->nhost, nz(g->subject),
			       nz(g->message));
			if (g->fix && c->verbose)
				printf("      fix: %s\n", safe(g->fix));
		}
	}
	if (r->nclean && !c->quiet)
		printf("\nclean: %s (%d)\n", r->clean_range, r->nclean);
	for (int i = 0; i < r->nstatus; i++)
		printf("\ndoctor exited %d (%s): %s (%d)%s%s\n", r->status[i].exit_status,
		       exit_meaning(r->status[i].exit_status), r->status[i].range, r->status[i].nhost,
		       r->status[i].error ? "\n      " : "", r->status[i].error ? safe(r->status[i].error) : "");
	if (r->nmissing)
		printf("\nmissing (sent nothing): %s (%d)\n", r->missing_range, r->nmissing);
	if (r->nunexpected && !c->quiet)
		printf("\nnot in --expect: %s (%d)\n", r->unexpected_range, r->nunexpected);
	if (r->nbench) {
		printf("\nbench: fleet median per figure, GB/s; below: under %.2f x median\n", r->below);
		gp_table_print(&bt, stdout, 2, 2, NULL);
		gp_table_free(&bt);
		if (tot.nlow)
			printf("\nbelow %.2f x median (%d)\n", r->below, tot.nlow);
		for (int i = 0; i < r->nbench; i++) {
			const struct gp_report_bench *b = &r->bench[i];

			for (int k = 0; k < b->nlow; k++)
				printf("  %s  %.2f GB/s = %.2f x %.2f  %s %s %s->%s %s%s%s%s%s %s%s%s\n",
				       r->host[b->low[k].host].name, b->low[k].gbps,
				       b->median > 0 ? b->low[k].gbps / b->median : 0, b->median, nz(b->mode), nz(b->path),
				       nz(b->src), nz(b->dst), gp_size_str(b->size, size, sizeof(size)), b->memory ? " " : "",
				       b->memory ? safe(b->memory) : "", b->p2p ? " p2p " : "", b->p2p ? safe(b->p2p) : "",
				       nz(b->engine), b->op ? " " : "", b->op ? safe(b->op) : "");
		}
	}
	if (r->nbad)
		printf("\nmalformed input (%d)\n", r->nbad);
	for (int i = 0; i < r->nbad; i++) {
		const struct gp_report_bad *b = &r->bad[i];

		if (b->line)
			printf("  %s:%d  %s  %s\n", safe(b->source), b->line, nz(b->host), safe(b->why));
		else
			printf("  %s  %s  %s\n", safe(b->source), nz(b->host), safe(b->why));
	}
	if (!c->quiet)
		printf("\nsummary: %d host%s, %d clean; findings on hosts: %d error, %d warning, %d unknown; %d missing, "
		       "%d below, %d malformed\n", r->nhost, r->nhost == 1 ? "" : "s", r->nclean, tot.hosts[0],
		       tot.hosts[1], tot.hosts[2], r->nmissing, tot.nlow, r->nbad);
	return 0;
}

static void json_hosts(struct gp_json *j, const char *key, const char *range, int n)
{
	gp_json_obj(j, key);
	gp_json_str(j, "hosts", range ? range : "");
	gp_json_int(j, "count", n);
	gp_json_end(j, '}');
}

static void json_key(struct gp_json *j, const struct gp_report_bench *b)
{
	gp_json_str(j, "mode", b->mode);
	gp_json_str(j, "path", b->path);
	gp_json_str(j, "src", b->src);
	gp_json_str(j, "dst", b->dst);
	gp_json_u64(j, "size", b->size);
	gp_json_str(j, "memory", b->memory);
	gp_json_str(j, "p2p", b->p2p);
	gp_json_str(j, "op", b->op);
	gp_json_str(j, "engine", b->engine);
}

static void print_json(const struct cli *c, const struct gp_report *r, int argc, char **argv)
{
	struct gp_json j;

	cli_json_begin(c, &j, "report", argc, argv);
	gp_json_num(&j, "below", r->below, 2);
	gp_json_int(&j, "hosts", r->nhost);
	gp_json_int(&j, "doctor_hosts", r->ndoctor);
	gp_json_arr(&j, "findings");
	for (int i = 0; i < r->ngroup; i++) {
		const struct gp_report_group *g = &r->group[i];

		gp_json_obj(&j, NULL);
		gp_json_str(&j, "id", g->id);
		gp_json_str(&j, "severity", g->severity);
		gp_json_str(&j, "subject", g->subject);
		gp_json_str(&j, "message", g->message);
		gp_json_str(&j, "fix", g->fix);
		gp_json_str(&j, "hosts", g->range);
		gp_json_int(&j, "count", g->nhost);
		gp_json_end(&j, '}');
	}
	gp_json_end(&j, ']');
	json_hosts(&j, "clean", r->clean_range, r->nclean);
	gp_json_arr(&j, "not_run");
	for (int i = 0; i < r->nstatus; i++) {
		gp_json_obj(&j, NULL);
		gp_json_int(&j, "exit_status", r->status[i].exit_status);
		gp_json_str(&j, "error", r->status[i].error);
		gp_json_str(&j, "hosts", r->status[i].range);
		gp_json_int(&j, "count", r->status[i].nhost);
		gp_json_end(&j, '}');
	}
	gp_json_end(&j, ']');
	if (r->have_expect) {
		json_hosts(&j, "missing", r->missing_range, r->nmissing);
		json_hosts(&j, "unexpected", r->unexpected_range, r->nunexpected);
	} else {
		gp_json_null(&j, "missing");
		gp_json_null(&j, "unexpected");
	}
	gp_json_arr(&j, "bench");
	for (int i = 0; i < r->nbench; i++) {
		const struct gp_report_bench *b = &r->bench[i];

		gp_json_obj(&j, NULL);
		json_key(&j, b);
		gp_json_int(&j, "count", b->nv);
		gp_json_num(&j, "median_gbps", b->median, 2);
		gp_json_arr(&j, "below");
		for (int k = 0; k < b->nlow; k++) {
			gp_json_obj(&j, NULL);
			gp_json_str(&j, "host", r->host[b->low[k].host].name);
			gp_json_num(&j, "gbps", b->low[k].gbps, 2);
			gp_json_num(&j, "fraction", b->median > 0 ? b->low[k].gbps / b->median : 0, 3);
			gp_json_end(&j, '}');
		}
		gp_json_end(&j, ']');
		gp_json_end(&j, '}');
	}
	gp_json_end(&j, ']');
	gp_json_arr(&j, "malformed");
	for (int i = 0; i < r->nbad; i++) {
		gp_json_obj(&j, NULL);
		gp_json_str(&j, "source", r->bad[i].source);
		gp_json_int(&j, "line", r->bad[i].line);
		gp_json_str(&j, "host", r->bad[i].host);
		gp_json_str(&j, "why", r->bad[i].why);
		gp_json_end(&j, '}');
	}
	gp_json_end(&j, ']');
	cli_json_end(c, &j, r->exit_code);
}

/* CSV: one row per folded item; columns that do not apply stay empty. */
static void csv_row(const char *kind, const char *sev, const char *id, const char *subject, const char *msg,
		    const char *hosts, int count, const struct gp_report_bench *b, double gbps, double median)
{
	char n[32], size[32], g[32], m[32];
	const char *cells[] = { kind, sev, id, subject, msg, hosts, n, b ? b->mode : NULL, b ? b->path : NULL,
				b ? b->src : NULL, b ? b->dst : NULL, b ? size : NULL, b ? b->memory : NULL,
				b ? b->p2p : NULL, b ? b->op : NULL,
				b ? b->engine : NULL, gbps >= 0 ? g : NULL, median >= 0 ? m : NULL };
	size_t nc = sizeof(cells) / sizeof(cells[0]);

	snprintf(n, sizeof(n), "%d", count);
	snprintf(size, sizeof(size), "%llu", b ? (unsigned long long)b->size : 0ull);
	snprintf(g, sizeof(g), "%.2f", gbps);
	snprintf(m, sizeof(m), "%.2f", median);
	for (size_t i = 0; i < nc; i++)
		gp_csv_field(stdout, cells[i] ? safe(cells[i]) : "", i + 1 < nc ? ',' : '\n');
}

static void print_csv(const struct cli *c, const struct gp_report *r)
{
	struct gp_buf at = GP_BUF_INIT;
	char ex[16];

	if (!c->no_header)
		printf("kind,severity,id,subject,message,hosts,count,mode,path,src,dst,size,memory,p2p,op,engine,gbps,"
		       "median_gbps\n");
	for (int i = 0; i < r->ngroup; i++) {
		const struct gp_report_group *g = &r->group[i];

		csv_row("finding", g->severity, g->id, g->subject, g->message, g->range, g->nhost, NULL, -1, -1);
	}
	csv_row("clean", NULL, NULL, NULL, NULL, r->clean_range, r->nclean, NULL, -1, -1);
	for (int i = 0; i < r->nstatus; i++) {
		snprintf(ex, sizeof(ex), "exit %d", r->status[i].exit_status);
		csv_row("not_run", NULL, ex, exit_meaning(r->status[i].exit_status), r->status[i].error, r->status[i].range,
			r->status[i].nhost, NULL, -1, -1);
	}
	if (r->have_expect) {
		csv_row("missing", NULL, NULL, NULL, NULL, r->missing_range, r->nmissing, NULL, -1, -1);
		csv_row("unexpected", NULL, NULL, NULL, NULL, r->unexpected_range, r->nunexpected, NULL, -1, -1);
	}
	for (int i = 0; i < r->nbench; i++) {
		const struct gp_report_bench *b = &r->bench[i];

		csv_row("bench", NULL, NULL, NULL, NULL, NULL, b->nv, b, -1, b->median);
		for (int k = 0; k < b->nlow; k++)
			csv_row("below", NULL, NULL, NULL, NULL, r->host[b->low[k].host].name, 1, b, b->low[k].gbps,
				b->median);
	}
	for (int i = 0; i < r->nbad; i++) {
		gp_buf_reset(&at);
		gp_buf_addf(&at, "%s:%d", r->bad[i].source, r->bad[i].line);
		csv_row("malformed", NULL, NULL, at.oom ? "(out of memory)" : gp_buf_str(&at), r->bad[i].why, r->bad[i].host,
			1, NULL, -1, -1);
	}
	gp_buf_free(&at);
}

/* --baseline: the majority's expectation on stdout, the hosts that deviate as comments. Returns the
 * exit code: 0 none deviates, 1 some do, 3 no host sent facts. */
static int print_baseline(const struct gp_report *r)
{
	struct gp_buf dev = GP_BUF_INIT;
	struct gp_expect x;
	struct gp_err e = { 0 };
	int nf = 0, ndev = 0, rc = 0;

	for (int h = 0; h < r->nhost; h++)
		nf += r->host[h].facts != NULL;
	if (!nf)
		return cli_error(EX_UNKNOWN, "report", "--baseline: no doctor facts in the input (gpup2p doctor --json "
				 "of each host: its \"facts\")");
	if (gp_report_baseline(r, &x, &e))
		return cli_fail(&e);
	printf("# gpup2p report --baseline of %d host%s: what most have (gpup2p doctor --expect FILE)\n", nf,
	       nf == 1 ? "" : "s");
	gp_expect_write(&x, stdout);
	for (int h = 0; h < r->nhost && !rc; h++) {
		gp_buf_reset(&dev);
		rc = gp_report_deviations(r, &x, h, &dev);
		if (rc > 0) {
			printf("# deviates: %s: %s\n", safe(r->host[h].name), safe(gp_buf_str(&dev)));
			ndev++;
			rc = 0;
		}
	}
	for (int h = 0; h < r->nhost && !rc; h++) /* doctor answered, with no facts: not judged */
		if (r->host[h].doctor && !r->host[h].facts)
			printf("# no facts: %s (doctor could not run, or is older than --baseline)\n", safe(r->host[h].name));
	gp_buf_free(&dev);
	gp_expect_free(&x);
	if (rc) {
		fprintf(stderr, "gpup2p: out of memory\n");
		return EX_ERROR;
	}
	return ndev ? 1 : 0;
}

int cmd_report(struct cli *c, int argc, char **argv)
{
	struct rep_opts o = { .below = 0.9 };
	struct gp_report r;
	struct gp_err e = { 0 };
	int rc;

	o.in = calloc((size_t)argc + 1, sizeof(*o.in));
	if (!o.in) {
		fprintf(stderr, "gpup2p: out of memory\n");
		return EX_ERROR;
	}
	if ((rc = opts_parse(&opts_report, c, argc, argv, &o)) >= 0) {
		free(o.in);
		return rc;
	}
	gp_report_init(&r);
	if (o.expect && gp_report_expect(&r, o.expect, &e)) {
		gp_report_free(&r);
		free(o.in);
		return e.cls == GP_E_USAGE ? cli_usage("report", "--expect: %s", safe(e.msg)) : cli_fail(&e);
	}
	r.info = c->verbose > 0;
	r.baseline = o.baseline;
	if (!o.nin)
		o.in[o.nin++] = "-";
	rc = 0;
	for (int i = 0; !rc && i < o.nin; i++)
		rc = strcmp(o.in[i], "-") ? gp_report_read_path(&r, o.in[i], &e)
					  : gp_report_read_stream(&r, stdin, "stdin", NULL, &e);
	if (!rc)
		rc = gp_report_fold(&r, o.below, &e);
	if (rc) {
		rc = cli_fail(&e);
	} else {
		if (!c->quiet)
			for (int i = 0; i < r.nbad; i++)
				fprintf(stderr, "gpup2p report: %s:%d: %s%s%s\n", safe(r.bad[i].source), r.bad[i].line,
					r.bad[i].host ? safe(r.bad[i].host) : "", r.bad[i].host ? ": " : "", safe(r.bad[i].why));
		if (o.baseline)
			rc = print_baseline(&r);
		else if (c->fmt == GP_OUT_JSON)
			print_json(c, &r, argc, argv);
		else if (c->fmt == GP_OUT_CSV)
			print_csv(c, &r);
		else
			rc = print_table(c, &r);
		if (!rc && !o.baseline)
			rc = r.exit_code;
	}
	gp_report_free(&r);
	free(o.in);
	return rc;
}
