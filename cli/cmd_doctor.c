/* gpup2p doctor — run the check registry (libcore/doctor) and print its findings. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpup2p/clock.h"
#include "cli.h"
#include "doctor_out.h"
#include "gpup2p/doctor.h"
#include "gpup2p/topo.h"

void help_doctor(FILE *f)
{
	fprintf(f,
		"usage: gpup2p doctor [--only LIST] [--skip LIST] [--active | --no-cuda]\n"
		"              [--kmsg] [--expect FILE] [--strict] [-q] [-v]\n"
		"              [--json [--pretty] | --prometheus [--textfile DIR]\n"
		"              [--alarms-only] | --nagios]\n"
		"       gpup2p doctor --list [--only LIST] [--skip LIST] [--json]\n"
		"       gpup2p doctor --explain ID|FAMILY\n\n"
		"Checks this machine (or, with --root DIR, a snapshot) for what breaks or slows\n"
		"GPU peer-to-peer and GPUDirect: the NVIDIA driver, the GPUs' state (NVML),\n"
		"BARs, the IOMMU, PCIe links, GPU and NIC placement, NUMA, NVLink, P2P as CUDA\n"
		"and NVML see it, peer-memory modules, gpup2p.ko, process limits. Each finding\n"
		"names its subject (BDF, module, file), the evidence and one fix. Severities:\n"
		"error, warning, info, ok, unknown (the source could not be read: says why),\n"
		"skipped (does not apply, or live only under --root).\n\n");
	opts_help(f, &opts_doctor);
	fprintf(f,
		"\nExit: 0 no warning or error, 1 warnings, 2 an error, 3 input unreadable, 64\n"
		"usage, 69 no NVIDIA GPU on the PCI bus (or no root), 77 permission denied\n"
		"(--nagios: 0-3).\n");
}

struct doc_opts {
	const char *only, *skip, *explain, *textfile, *expect;
	int list, active, kmsg, strict, no_cuda, pretty, prom, nagios, alarms_only;
};

/* every check id and family after the ids already typed ("a,b,"): --only, --skip, --explain */
static void check_ids(const char *cur)
{
	const char *comma = strrchr(cur, ',');
	int pre = comma ? (int)(comma - cur + 1) : 0;
	char fam[64], last[64] = "";

	for (int i = 0; i < gp_doctor_count(); i++) {
		const char *id = gp_doctor_at(i)->id;

		printf("%.*s%s\n", pre, cur, id);
		snprintf(fam, sizeof(fam), "%.*s", (int)strcspn(id, "."), id);
		if (strcmp(fam, last))
			printf("%.*s%s\n", pre, cur, fam);
		snprintf(last, sizeof(last), "%s", fam);
	}
}

#define O(f) (long)offsetof(struct doc_opts, f)
static const struct opt doctor_opts[] = {
	{ "--only", NULL, "LIST", OPT_STR, O(only), .suggest = check_ids, .needs = "a value",
	  .help = "run only these checks: comma list of ids (bar.small),\nfamilies (bar) or bar.*" },
	{ "--skip", NULL, "LIST", OPT_STR, O(skip), .suggest = check_ids, .needs = "a value",
	  .help = "leave these out (same syntax)" },
	{ "--active", NULL, NULL, OPT_FLAG, O(active), 1,
	  .help = "also run the active checks: copy between every GPU pair and\nbetween host and each GPU, checking every "
		  "byte (p2p.verify),\nand time the copies against the link's rate (p2p.bandwidth);\nlive only, progress on "
		  "stderr when it is a terminal" },
	{ "--no-cuda", NULL, NULL, OPT_FLAG, O(no_cuda), 1,
	  .help = "do not load libcuda: the checks that need it\n(driver.cuda_init, p2p.access, p2p.nvml_status) say "
		  "skipped;\nsaves cuInit (0.1-0.2 s): a frequent health check" },
	{ "--kmsg", NULL, NULL, OPT_FLAG, O(kmsg), 1,
	  .help = "also read the kernel log for Xid events (gpu.xid; may need\nroot)" },
	{ "--expect", NULL, "FILE", OPT_STR, O(expect), .flags = OPT_FILE,
	  .needs = "a file (gpup2p report --baseline writes one)",
	  .help = "also judge this node against the baseline in FILE (GPU and\nNIC counts, GPU model, NIC rate, PCIe gen x "
		  "width, NVLinks,\nNUMA nodes: the expect.* checks; gpup2p report derives one\nfrom many nodes); a bad FILE "
		  "is exit 64 naming FILE:LINE" },
	{ "--strict", NULL, NULL, OPT_FLAG, O(strict), 1, .help = "count unknown findings as warnings (exit 1)" },
	{ "--list", NULL, NULL, OPT_FLAG, O(list), 1, .help = "every check: id, family, kind, sources, title" },
	{ "--explain", NULL, "ID", OPT_STR, O(explain), .suggest = check_ids, .needs = "a value",
	  .help = "what a check (or every check of a family) reads, when it\nalarms, the fix" },
	{ "--quiet", "-q", NULL, OPT_FLAG, -1, .flags = OPT_DOC,
	  .help = "print only the alarms (errors, warnings; unknown with\n--strict)" },
	{ "--verbose", "-v", NULL, OPT_INC, -1, .flags = OPT_DOC,
	  .help = "also list each ok and skipped finding, and the evidence" },
	{ "--json", NULL, NULL, OPT_FLAG, -1, .flags = OPT_DOC,
	  .help = "one line of JSON (under 64 KiB: the least urgent findings are\nleft out and counted in \"truncated\" "
		  "when more would not fit),\nwith host, boot_id, time, the gpup2p version, argv and\nexit_status; also "
		  "when doctor cannot run" },
	{ "--pretty", NULL, NULL, OPT_FLAG, O(pretty), 1,
	  .help = "indent the JSON, every finding (no size bound: for files and\npeople)" },
	{ "--prometheus", NULL, NULL, OPT_FLAG, O(prom), 1,
	  .help = "Prometheus text (node_exporter textfile collector):\ngpup2p_check_status per finding (its state in the "
		  "value),\ngpup2p_doctor_findings{level},\ngpup2p_copy_bandwidth_bytes_per_second (--active),\n"
		  "gpup2p_doctor_exit, gpup2p_doctor_duration_seconds" },
	{ "--textfile", NULL, "DIR", OPT_STR, O(textfile), .flags = OPT_DIR,
	  .needs = "a directory (node_exporter's --collector.textfile.directory)",
	  .help = "write it to DIR/gpup2p.prom atomically (temporary file, then\nrename)" },
	{ "--alarms-only", NULL, NULL, OPT_FLAG, O(alarms_only), 1,
	  .help = "gpup2p_check_status only for errors, warnings and unknown\nfindings (the counts stay whole): a few "
		  "series per node\ninstead of hundreds" },
	{ "--nagios", NULL, NULL, OPT_FLAG, O(nagios), 1,
	  .help = "one Nagios status line with perfdata; exit 0 OK, 1 WARNING, 2\nCRITICAL, 3 UNKNOWN (could not run, "
		  "usage, no GPU,\npermission); nothing on stderr" },
	{ 0 },
};
#undef O

static const struct opt_rule doctor_rules[] = {
	{ OPT_EXCLUDES, "--active", "--no-cuda", NULL, NULL },
	{ OPT_EXCLUDES, "--list", "--explain", NULL, NULL },
	{ OPT_EXCLUDES, "--prometheus", "--nagios", NULL, NULL },
	{ OPT_NEEDS, "--textfile", "--prometheus", NULL, NULL },
	{ OPT_NEEDS, "--alarms-only", "--prometheus", NULL, NULL },
	{ OPT_EXCLUDES, "--prometheus", "--list --explain", NULL, NULL },
	{ OPT_EXCLUDES, "--nagios", "--list --explain", NULL, NULL },
	{ OPT_REFUSES, "--csv --jsonl", .why = "it prints text or --json" },
	{ OPT_EXCLUDES, "--json", "--prometheus --nagios", NULL, NULL },
	{ OPT_NEEDS, "--pretty", "--json", NULL, NULL },
	{ 0 },
};

const struct opts_cmd opts_doctor = {
	.name = "doctor", .opts = doctor_opts, .rules = doctor_rules, .col = 18, .help = help_doctor,
	.globals = "--root DIR, --color=WHEN: see gpup2p --help",
};


/* --active on a terminal: what is being copied now, on one line of stderr. */
static void progress(void *arg, const char *what)
{
	(void)arg;
	fprintf(stderr, "\r\033[K%s", what ? what : "");
	fflush(stderr);
}

static int do_list(struct cli *c, const unsigned char *on)
{
	struct gp_table t;
	char src[128];

	if (c->fmt == GP_OUT_JSON) {
		struct gp_json j;

		cli_json_begin(c, &j, "doctor", c->argc, c->argv);
		gp_json_arr(&j, "checks");
		for (int i = 0; i < gp_doctor_count(); i++) {
			const struct gp_doctor_check *k = gp_doctor_at(i);

			if (!on[i])
				continue;
			gp_json_obj(&j, NULL);
			gp_json_str(&j, "id", k->id);
			gp_json_str(&j, "family", gp_doctor_family(k->id)->name);
			gp_json_str(&j, "title", k->title);
			gp_json_str(&j, "kind", k->active ? "active" : "static");
			gp_json_str(&j, "sources", gp_doctor_sources_str(k->sources & 0xffffu, src, sizeof(src)));
			gp_json_str(&j, "optional_sources", gp_doctor_sources_str(GP_SRC_OPTIONAL(k->sources), src,
										  sizeof(src)));
			gp_json_end(&j, '}');
		}
		gp_json_end(&j, ']');
		cli_json_end(c, &j, 0);
		return 0;
	}
	if (gp_table_init(&t, 5))
		return EX_ERROR;
	for (int i = 0; i < gp_doctor_count(); i++) {
		const struct gp_doctor_check *k = gp_doctor_at(i);
		const char *row[5];

		if (!on[i])
			continue;
		row[0] = k->id;
		row[1] = gp_doctor_family(k->id)->name;
		row[2] = k->active ? "active" : "static";
		row[3] = gp_doctor_check_sources(k, src, sizeof(src));
		row[4] = k->title;
		gp_table_row(&t, row);
	}
	gp_table_print(&t, stdout, 0, 2, NULL);
	gp_table_free(&t);
	return 0;
}

static void explain_one(const struct gp_doctor_check *k)
{
	const struct gp_doctor_family *fam = gp_doctor_family(k->id);
	char src[128];

	printf("%s: %s\n", k->id, k->title);
	printf("  family %s (%s), %s, reads: %s\n  ", fam->name, fam->title, k->active ? "active" : "static",
	       gp_doctor_check_sources(k, src, sizeof(src)));
	cli_wrap(stdout, k->explain, 2, 2, cli_term_width());
}

static int do_explain(const char *name)
{
	const struct gp_doctor_check *k = gp_doctor_find(name);
	const struct gp_doctor_family *fam = strchr(name, '.') ? NULL : gp_doctor_family(name);

	if (k) {
		explain_one(k);
		return 0;
	}
	if (!fam)
		return cli_usage("doctor", "--explain: no check or family '%s' (gpup2p doctor --list shows them)", name);
	for (int i = 0; i < fam->n; i++) {
		if (i)
			putchar('\n');
		explain_one(&fam->checks[i]);
	}
	return 0;
}

/* --expect FILE into x: 0, or the exit code after the message (the file unreadable, or what libcore's
 * parser found wrong, naming FILE:LINE) */
static int load_expect(struct gp_expect *x, const char *path)
{
	struct gp_err e = { 0 };
	FILE *f = fopen(path, "r");
	int rc;

	if (!f)
		return cli_error(EX_USAGE_, NULL, "--expect %s: %s", path, strerror(errno));
	rc = gp_expect_parse(x, f, path, &e);
	fclose(f);
	return rc ? cli_fail(&e) : 0;
}

/* GPUP2P_DOCTOR_TIMING set: where the run's wall time went, on stderr (phases, then each check). */
static void print_timing(const struct gp_doctor_ctx *d, const unsigned char *on, const double ph[4])
{
	double cu, sym;

	gp_doctor_prefetch_ms(d->pre, &cu, &sym);
	fprintf(stderr, "doctor timing (ms): scan+nvml+topo %.2f, context %.2f, checks %.2f, total %.2f; "
		"on threads: libcuda %.2f, kallsyms %.2f\n", ph[1] - ph[0], ph[2] - ph[1], ph[3] - ph[2],
		ph[3] - ph[0], cu, sym);
	for (int i = 0; d->check_ms && i < gp_doctor_count(); i++)
		if (on[i])
			fprintf(stderr, "  %-22s %8.2f\n", gp_doctor_at(i)->id, d->check_ms[i]);
}

/* --nagios: the status line says it all; anything on stderr (a warning, libcuda's or NVML's own
 * messages) would make check_by_ssh report "Remote command execution failed" and lose the line. */
static void quiet_stderr(struct cli *c)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	c->quiet = 1;
	if (fd >= 0) {
		fflush(stderr);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
}

/* Print the run (r->d NULL: doctor could not run) in the format asked; returns the exit code. */
static int finish(struct cli *c, const struct doc_opts *o, struct doc_run *r, double t0)
{
	int rc;

	r->seconds = ((gp_clock_s() * 1e3) - t0) / 1e3;
	r->strict = o->strict;
	r->alarms_only = o->alarms_only;
	if (o->nagios)
		return doc_nagios(r);
	if (o->prom)
		return (rc = doc_prom(c, r, o->textfile)) ? rc : r->rc;
	if (c->fmt == GP_OUT_JSON)
		return (rc = doc_json(c, r)) ? rc : r->rc;
	return r->rc;
}

/* Run the selected checks on what cli_load_topo loaded; fills r (r->d NULL when they could not run). */
static int run(struct cli *c, const struct doc_opts *o, const unsigned char *on, struct gp_topo *t,
	       struct gp_doctor_pre *pre, double ph[4], struct gp_doctor_ctx *d, struct doc_run *r, int sum[GP_SEV_N])
{
	struct gp_err e = { 0 };
	int rc;

	if (gp_doctor_ctx_init(d, &c->root, &c->pci, c->facts, t, &e)) {
		gp_doctor_prefetch_free(pre);
		return cli_fail(&e);
	}
	d->pre = pre;
	ph[1] = (gp_clock_s() * 1e3);
	gp_doctor_proc_read(d);
	ph[2] = (gp_clock_s() * 1e3);
	d->active = o->active;
	d->no_cuda = o->no_cuda;
	d->kmsg = o->kmsg;
	d->expect = r->expect;
	if (o->active && !c->quiet && isatty(STDERR_FILENO))
		d->progress = progress;
	rc = gp_doctor_run(d, on, &e);
	ph[3] = (gp_clock_s() * 1e3);
	if (d->progress)
		progress(NULL, NULL);
	if (getenv("GPUP2P_DOCTOR_TIMING"))
		print_timing(d, on, ph);
	if (rc) {
		rc = cli_fail(&e);
		gp_doctor_ctx_free(d);
		return rc;
	}
	r->d = d;
	r->sum = sum;
	gp_doctor_summary(&d->out, sum);
	rc = gp_doctor_exit_code(sum, o->strict);
	if (!t->ngpu) {
		rc = cli_error(EX_UNAVAIL, "doctor", "no NVIDIA GPU on the PCI bus: nothing to check (gpup2p --root DIR "
			       "doctor checks a snapshot)");
	}
	return rc;
}

int cmd_doctor(struct cli *c, int argc, char **argv)
{
	struct doc_opts o = { 0 };
	struct doc_run r = { .argc = argc, .argv = argv };
	struct gp_doctor_ctx d;
	struct gp_doctor_pre *pre;
	struct gp_topo t;
	struct gp_expect x;
	struct gp_err e = { 0 };
	unsigned char *on;
	const char *bad;
	int sum[GP_SEV_N], rc;
	double t0 = (gp_clock_s() * 1e3), ph[4];

	if (opts_argv_has(&opts_doctor, argc, argv, "--nagios"))
		quiet_stderr(c);
	rc = opts_parse(&opts_doctor, c, argc, argv, &o);
	if (rc > 0 && opts_argv_has(&opts_doctor, argc, argv, "--nagios")) {
		/* a usage error still gives Nagios its one line, as UNKNOWN */
		o.nagios = 1;
		r.rc = rc;
		return finish(c, &o, &r, t0);
	}
	if (rc >= 0)
		return rc;
	r.pretty = o.pretty;
	if (o.explain)
		return do_explain(o.explain);
	on = calloc((size_t)gp_doctor_count() + 1, 1);
	if (!on) {
		gp_err_set(&e, GP_E_FAIL, ENOMEM, "out of memory");
		return cli_fail(&e);
	}
	/* each list alone first, so that the message says which option names the unknown check */
	bad = o.only && gp_doctor_select(on, o.only, NULL, &e) ? "--only"
	      : o.skip && gp_doctor_select(on, NULL, o.skip, &e) ? "--skip" : NULL;
	if (bad || gp_doctor_select(on, o.only, o.skip, &e)) {
		free(on);
		r.rc = bad ? cli_usage("doctor", "%s: %s (gpup2p doctor --list shows them)", bad, e.msg)
			   : cli_usage("doctor", "%s", e.msg);
		return o.nagios ? finish(c, &o, &r, t0) : r.rc;
	}
	if (o.list) {
		rc = do_list(c, on);
		free(on);
		return rc;
	}
	gp_expect_init(&x);
	if (o.expect && (r.rc = load_expect(&x, o.expect))) {
		free(on);
		return finish(c, &o, &r, t0);
	}
	r.expect = o.expect ? &x : NULL;
	ph[0] = (gp_clock_s() * 1e3);
	if ((r.rc = cli_root(c))) {
		gp_expect_free(&x);
		free(on);
		return finish(c, &o, &r, t0);
	}
	pre = gp_doctor_prefetch(&c->root, on, o.active, o.no_cuda);
	c->facts_flags = GP_GPU_HEALTH; /* pcie.replay, nvlink.errors: the counters, read only here */
	r.rc = cli_load_topo(c, &t, NULL, 0);
	if (r.rc) {
		gp_doctor_prefetch_free(pre);
		gp_expect_free(&x);
		free(on);
		return finish(c, &o, &r, t0);
	}
	r.rc = run(c, &o, on, &t, pre, ph, &d, &r, sum);
	if (r.d && c->fmt == GP_OUT_TABLE && !o.prom && !o.nagios && t.ngpu && doc_text(c, &d, o.strict, sum))
		r.rc = EX_ERROR;               /* out of memory */
	rc = finish(c, &o, &r, t0);
	if (r.d)
		gp_doctor_ctx_free(&d);
	gp_topo_free(&t);
	gp_expect_free(&x);
	free(on);
	return rc;
}
