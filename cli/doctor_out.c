/* gpup2p doctor — the formats for machines (see doctor_out.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doctor_out.h"
#include "gpup2p/buf.h"
#include "gpup2p/strmap.h"

#ifndef GPUP2P_VERSION
#define GPUP2P_VERSION "0.0.0"
#endif

/* --- JSON ---------------------------------------------------------------------------------------- */

/* sources.snapshot: what the root's gpup2p/snapshot-info says, or null (live, or a tree that is no
 * snapshot). "unreadable": files the snapshot's live source could not give (their checks say unknown). */
static void json_snapshot(struct gp_json *j, const struct gp_doctor_sources *s)
{
	char groups[sizeof(s->snap.captured)], *save = NULL;

	if (!s->snapshot) {
		gp_json_null(j, "snapshot");
		return;
	}
	gp_json_obj(j, "snapshot");
	gp_json_int(j, "format", s->snap.format);
	gp_json_str(j, "writer", s->snap.writer[0] ? s->snap.writer : NULL);
	gp_json_str(j, "created", s->snap.created[0] ? s->snap.created : NULL);
	gp_json_str(j, "source", s->snap.source[0] ? s->snap.source : NULL);
	gp_json_str(j, "kernel", s->snap.kernel[0] ? s->snap.kernel : NULL);
	gp_json_arr_flat(j, "captured");
	snprintf(groups, sizeof(groups), "%s", s->snap.captured);
	for (char *g = strtok_r(groups, " ", &save); g; g = strtok_r(NULL, " ", &save))
		gp_json_str(j, NULL, g);
	gp_json_end(j, ']');
	gp_json_obj(j, "unreadable");
	for (int i = 0; i < s->snap.nunread; i++)
		gp_json_str(j, s->snap.unread[i].path, strerror(s->snap.unread[i].err));
	gp_json_end(j, '}');
	gp_json_end(j, '}');
}

/* An int fact, null where not known (-1). */
static void json_known(struct gp_json *j, const char *key, int v)
{
	if (v < 0)
		gp_json_null(j, key);
	else
		gp_json_int(j, key, v);
}

/* facts: this node's GPUs and NICs in the terms of --expect (report --baseline reads them); null
 * when out of memory. */
static void json_facts(struct gp_json *j, struct gp_doctor_ctx *d)
{
	static const char *const arr[GP_EXPECT_KINDS] = { "gpus", "nics" };
	struct gp_expect x;

	if (gp_doctor_node_facts(d, &x)) {
		gp_json_null(j, "facts");
		return;
	}
	gp_json_obj(j, "facts");
	for (int k = 0; k < GP_EXPECT_KINDS; k++) {
		gp_json_arr(j, arr[k]);
		for (int i = 0; i < x.ndev; i++) {
			const struct gp_expect_dev *v = &x.dev[i];

			if (v->kind != k)
				continue;
			gp_json_obj(j, NULL);
			gp_json_str(j, "name", v->name);
			gp_json_str(j, "bdf", v->bdf);
			if (k == GP_EXPECT_GPU)
				gp_json_str(j, "model", v->model[0] ? v->model : NULL);
			json_known(j, "gen", v->gen);
			json_known(j, "width", v->width);
			if (k == GP_EXPECT_GPU)
				json_known(j, "nvlinks", v->nvlinks);
			json_known(j, "numa", v->numa);
			if (k == GP_EXPECT_NIC) {
				if (v->rate > 0)
					gp_json_num(j, "rate_gbps", v->rate, 3);
				else
					gp_json_null(j, "rate_gbps");
			}
			gp_json_end(j, '}');
		}
		gp_json_end(j, ']');
	}
	gp_json_end(j, '}');
	gp_expect_free(&x);
}

#define FND(x) ((const struct gp_finding *)(x))

static void f_id(const void *x, struct gp_value *v) { v->s = FND(x)->check->id; }
static void f_sev(const void *x, struct gp_value *v) { v->s = gp_sev_name(FND(x)->sev); }
static void f_subject(const void *x, struct gp_value *v) { v->s = FND(x)->subject; v->null = !v->s; }
static void f_message(const void *x, struct gp_value *v) { v->s = FND(x)->message; v->null = !v->s; }
static void f_fix(const void *x, struct gp_value *v) { v->s = FND(x)->fix; v->null = !v->s; }

static void f_bdf(const void *x, struct gp_value *v) /* the functions concerned, space-separated */
{
	for (int k = 0; k < FND(x)->nbdf; k++)
		gp_buf_addf(v->buf, "%s%s", k ? " " : "", FND(x)->bdf[k]);
	v->s = gp_buf_str(v->buf);
}

static void f_evidence(const void *x, struct gp_value *v) /* key=value, ';' between */
{
	for (int k = 0; k < FND(x)->nev; k++)
		gp_buf_addf(v->buf, "%s%s=%s", k ? ";" : "", FND(x)->ev[k].key, FND(x)->ev[k].value);
	v->s = gp_buf_str(v->buf);
}

static void j_evidence(const void *x, struct gp_json *j, const char *key)
{
	gp_json_obj(j, key);
	for (int k = 0; k < FND(x)->nev; k++)
		gp_json_str(j, FND(x)->ev[k].key, FND(x)->ev[k].value);
	gp_json_end(j, '}');
}

/* A finding's fields (doctor-checks.md's contract), in JSON order. */
static const struct gp_field finding_fields[] = {
	{ "id", "id", 1, "CHECK", GP_FIELD_STR, 0, f_id, NULL, 0, NULL },
	{ "severity", "severity", 2, "SEVERITY", GP_FIELD_STR, 0, f_sev, NULL, 0, NULL },
	{ "subject", "subject", 3, "SUBJECT", GP_FIELD_STR, 0, f_subject, NULL, 0, NULL },
	{ "bdf", "bdf", 4, NULL, GP_FIELD_WORDS, 0, f_bdf, NULL, 0, NULL },
	{ "message", "message", 5, "MESSAGE", GP_FIELD_STR, 0, f_message, NULL, 0, NULL },
	{ "fix", "fix", 6, NULL, GP_FIELD_STR, 0, f_fix, NULL, 0, NULL },
	{ "evidence", "evidence", 7, NULL, GP_FIELD_JSON, 0, f_evidence, j_evidence, 0, NULL },
};

static void json_finding(struct gp_json *j, const struct gp_finding *f)
{
	struct gp_buf b = GP_BUF_INIT;

	gp_json_obj(j, NULL);
	gp_fields_json(j, finding_fields, (int)(sizeof(finding_fields) / sizeof(finding_fields[0])), f, 0, &b);
	gp_json_end(j, '}');
	gp_buf_free(&b);
}

/* "2026-11-24T00:41:07Z" */
static void utc_now(char *buf, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!gmtime_r(&now, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, n, "unknown");
}

/* The whole document into f: the findings with keep[i] (all when keep is NULL). */
static void json_doc(const struct cli *c, const struct doc_run *r, FILE *f, const unsigned char *keep, int left,
		     const char *now)
{
	struct gp_doctor_ctx *d = r->d;
	struct gp_json j;

	cli_json_open(c, &j, f, r->pretty, "doctor", r->argc, r->argv);
	gp_json_str(&j, "host", d ? gp_doctor_host(d) : NULL);
	gp_json_str(&j, "boot_id", d ? gp_doctor_boot_id(d) : NULL);
	gp_json_str(&j, "time", now);
	if (!d) {
		/* doctor could not run: what it was asked to read, and why not */
		gp_json_str(&j, "root", c->root_dir);
		gp_json_null(&j, "sources");
		gp_json_null(&j, "facts");
		gp_json_null(&j, "summary");
		gp_json_int(&j, "truncated", 0);
		gp_json_arr(&j, "findings");
		gp_json_end(&j, ']');
		gp_json_str(&j, "error", cli_last_error());
		gp_json_arr(&j, "messages");
		gp_json_end(&j, ']');
		gp_json_int(&j, "exit_status", r->rc);
		gp_json_end(&j, '}');
		return;
	}
	gp_json_str(&j, "root", d->src.live ? NULL : d->root->dir);
	gp_json_obj(&j, "sources");
	gp_json_bool(&j, "live", d->src.live);
	gp_json_obj(&j, "nvml");
	gp_json_bool(&j, "available", d->src.nvml);
	gp_json_str(&j, "why", d->src.nvml ? NULL : d->src.nvml_why);
	gp_json_end(&j, '}');
	gp_json_obj(&j, "cuda");
	gp_json_bool(&j, "available", d->src.cuda);
	gp_json_str(&j, "why", d->src.cuda ? NULL : d->src.cuda_why);
	gp_json_end(&j, '}');
	json_snapshot(&j, &d->src);
	gp_json_end(&j, '}');
	json_facts(&j, d);
	gp_json_obj(&j, "summary");
	for (int s = 0; s < GP_SEV_N; s++)
		gp_json_int(&j, gp_sev_name((enum gp_sev)s), r->sum[s]);
	gp_json_end(&j, '}');
	gp_json_int(&j, "truncated", left);
	gp_json_arr(&j, "findings");
	for (int i = 0; i < d->out.n; i++)
		if (!keep || keep[i])
			json_finding(&j, &d->out.v[i]);
	gp_json_end(&j, ']');
	cli_json_end(c, &j, r->rc);
}

/* What gp_doctor_fit_doc renders with. */
struct json_arg {
	const struct cli *c;
	const struct doc_run *r;
	const char *now;
};

/* The document with the findings keep[i] (all when keep is NULL) into a memory buffer; NULL when out
 * of memory. */
static char *json_render(void *arg, const unsigned char *keep, int left, size_t *len)
{
	const struct json_arg *a = arg;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	json_doc(a->c, a->r, f, keep, left, a->now);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Bytes finding i adds to a one-line document: itself and the ", " before it; 0 when out of memory. */
static size_t finding_size(void *arg, int i)
{
	const struct json_arg *a = arg;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gp_json j;

	if (!f)
		return 0;
	gp_json_init(&j, f, 0);
	json_finding(&j, &a->r->d->out.v[i]);
	if (fclose(f)) {
		free(buf);
		return 0;
	}
	free(buf);
	return len + 2;
}

int doc_json(const struct cli *c, const struct doc_run *r)
{
	static const struct gp_findings none;
	char now[32], *doc;
	struct json_arg a = { c, r, now };
	struct gp_doctor_render how = { json_render, finding_size, &a };
	size_t len;
	int left;

	utc_now(now, sizeof(now));
	/* one line, short enough for pdsh/clush: the most urgent findings that fit, the rest counted in
	 * "truncated" (--pretty is for files and people: whole) */
	doc = gp_doctor_fit_doc(r->d && !r->pretty ? &r->d->out : &none, DOC_JSON_MAX, &how, &len, &left);
	if (!doc) {
		fprintf(stderr, "gpup2p: out of memory\n");
		return EX_ERROR;
	}
	fwrite(doc, 1, len, stdout);
	free(doc);
	return 0;
}

/* --- Prometheus ---------------------------------------------------------------------------------- */

/* gpup2p_check_status: 0 ok, info or skipped; 1 warning; 2 error; 3 unknown (as Nagios counts). */
static int sev_status(enum gp_sev s)
{
	return s == GP_SEV_ERROR ? 2 : s == GP_SEV_WARNING ? 1 : s == GP_SEV_UNKNOWN ? 3 : 0;
}

/* Finding i repeats an earlier one's id and subject (the contract says it never does; a repeated
 * series would make the whole file unreadable to Prometheus, so the first one stands). seen: the
 * "id subject" pairs so far (one look-up each: a host has tens of thousands of findings). 1 repeated,
 * 0 not, -1 out of memory. */
static int repeated(const struct gp_findings *l, int i, struct gp_strmap *seen, struct gp_buf *key)
{
	gp_buf_reset(key);
	if (gp_buf_add(key, l->v[i].check->id, " ", l->v[i].subject, (char *)NULL))
		return -1;
	if (gp_strmap_get(seen, gp_buf_str(key)) >= 0)
		return 1;
	return gp_strmap_put(seen, gp_buf_str(key), i) ? -1 : 0;
}

/* One end of a copy: "host" or the GPU's number. */
static const char *end_name(int end, char *buf, size_t n)
{
	if (end < 0)
		return "host";
	snprintf(buf, n, "%d", end);
	return buf;
}

static void prom_figures(struct gp_doctor_ctx *d, FILE *f)
{
	static const char *const name = "gpup2p_copy_bandwidth_bytes_per_second";
	char src[16], dst[16], gpu[16], uuid[96];
	int head = 0;

	for (int i = 0; i < d->out.n; i++) {
		const struct gp_finding *fi = &d->out.v[i];

		for (int k = 0; k < fi->nfig; k++) {
			const struct gp_figure *g = &fi->fig[k];
			int at = g->src >= 0 ? g->src : g->dst;
			const char *lab[8] = { "gpu", end_name(at, gpu, sizeof(gpu)), "UUID", NULL, "src",
					       end_name(g->src, src, sizeof(src)), "dst", end_name(g->dst, dst, sizeof(dst)) };

			lab[3] = gp_doctor_gpu_uuid(d, at, uuid, sizeof(uuid));
			if (!head++)
				gp_prom_family(f, name, "gauge", "Copy rate doctor --active measured (p2p.bandwidth, median), "
					       "bytes per second from src to dst (host or a GPU number); gpu and UUID name "
					       "the GPU end (the source GPU of a GPU-to-GPU copy)");
			gp_prom_sample(f, name, lab, 4, g->bytes_per_s);
		}
	}
}

static void prom_write(const struct doc_run *r, FILE *f)
{
	struct gp_doctor_ctx *d = r->d;
	struct gp_strmap seen = { 0 };
	struct gp_buf key = GP_BUF_INIT;
	const char *lab[6];

	gp_prom_family(f, "gpup2p_doctor_exit", "gauge", "Exit status of the last gpup2p doctor run: 0 ok, 1 warnings, "
		       "2 errors, 3 could not read its data, 64 usage, 69 no GPU or facility, 77 permission denied");
	gp_prom_sample(f, "gpup2p_doctor_exit", NULL, 0, r->rc);
	gp_prom_family(f, "gpup2p_doctor_duration_seconds", "gauge", "Wall time of the last gpup2p doctor run");
	gp_prom_sample(f, "gpup2p_doctor_duration_seconds", NULL, 0, r->seconds);
	gp_prom_family(f, "gpup2p_build_info", "gauge", "The gpup2p that wrote these metrics (always 1)");
	lab[0] = "version";
	lab[1] = GPUP2P_VERSION;
	gp_prom_sample(f, "gpup2p_build_info", lab, 1, 1);
	if (!d)
		return;
	/* "level", not "severity": alerting rules set severity for routing, and a series' own label of
	 * that name would be overwritten by the rule's or route the alert by doctor's word */
	gp_prom_family(f, "gpup2p_doctor_findings", "gauge", "Findings of the last doctor run per level "
		       "(doctor's severity)");
	lab[0] = "level";
	for (int s = 0; s < GP_SEV_N; s++) {
		lab[1] = gp_sev_name((enum gp_sev)s);
		gp_prom_sample(f, "gpup2p_doctor_findings", lab, 1, r->sum[s]);
	}
	/* the state only in the value: a finding that turns from ok to error stays one series */
	gp_prom_family(f, "gpup2p_check_status", "gauge", "One doctor finding (gpup2p doctor --explain ID): 0 ok, info "
		       "or skipped, 1 warning, 2 error, 3 unknown");
	for (int i = 0; i < d->out.n; i++) {
		const struct gp_finding *fi = &d->out.v[i];

		/* out of memory (-1): written rather than lost; a repeat is the contract's breach anyway */
		if (repeated(&d->out, i, &seen, &key) > 0 || (r->alarms_only && !sev_status(fi->sev)))
			continue;
		lab[0] = "id", lab[1] = fi->check->id;
		lab[2] = "subject", lab[3] = fi->subject;
		gp_prom_sample(f, "gpup2p_check_status", lab, 2, sev_status(fi->sev));
	}
	gp_strmap_free(&seen);
	gp_buf_free(&key);
	prom_figures(d, f);
}

int doc_prom(const struct cli *c, const struct doc_run *r, const char *dir)
{
	struct gp_err e = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)c;
	if (!dir) {
		prom_write(r, stdout);
		return 0;
	}
	if (!(f = open_memstream(&buf, &len))) {
		fprintf(stderr, "gpup2p: out of memory\n");
		return EX_ERROR;
	}
	prom_write(r, f);
	if (fclose(f)) {
		free(buf);
		fprintf(stderr, "gpup2p: out of memory\n");
		return EX_ERROR;
	}
	if (gp_out_replace_file(dir, DOC_PROM_FILE, buf, len, &e)) {
		free(buf);
		return cli_fail(&e);
	}
	free(buf);
	return 0;
}

/* --- Nagios -------------------------------------------------------------------------------------- */

int doc_nagios(const struct doc_run *r)
{
	struct gp_doctor_nagios_run n = { .out = r->d && r->sum ? &r->d->out : NULL, .sum = r->d ? r->sum : NULL,
					  .rc = r->rc, .host = r->d ? gp_doctor_host(r->d) : NULL,
					  .why = cli_last_error(), .seconds = r->seconds, .strict = r->strict };

	return gp_doctor_nagios(stdout, &n);
}
