/* gpup2p — report: the hosts, the doctor findings and bench figures they sent, malformed input. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/buf.h"
#include "report/internal.h"

/* Grow an array of *cap elements of size sz to hold n + 1. */
static int grow(void **v, int *cap, int n, size_t sz)
{
	void *p;
	int c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	if (!(p = realloc(*v, (size_t)c * sz)))
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

void gp_report_init(struct gp_report *r)
{
	memset(r, 0, sizeof(*r));
	r->below = 0.9;
}

int report_host(struct gp_report *r, const char *name)
{
	int i = gp_strmap_get(&r->hmap, name);
	struct gp_report_host *h;

	if (i >= 0)
		return i;
	if (grow((void **)&r->host, &r->hcap, r->nhost, sizeof(*r->host)))
		return -ENOMEM;
	h = &r->host[r->nhost];
	memset(h, 0, sizeof(*h));
	h->exit_status = -1;
	if (!(h->name = strdup(name)))
		return -ENOMEM;
	if (gp_strmap_put(&r->hmap, name, r->nhost)) {
		free(h->name);
		return -ENOMEM;
	}
	return r->nhost++;
}

int report_bad(struct gp_report *r, const char *source, int line, const char *host, const char *fmt, ...)
{
	struct gp_report_bad *b;
	char why[512];
	va_list ap;
	int h = -1;

	if (host && (h = report_host(r, host)) < 0)
		return h;
	if (grow((void **)&r->bad, &r->badcap, r->nbad, sizeof(*r->bad)))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	b = &r->bad[r->nbad];
	b->line = line;
	b->source = strdup(source);
	b->host = dup_or_null(host);
	b->why = strdup(why);
	if (!b->source || !b->why || (host && !b->host)) {
		free(b->source);
		free(b->host);
		free(b->why);
		return -ENOMEM;
	}
	r->nbad++;
	if (h >= 0)
		r->host[h].bad++;
	return 0;
}

/* The print order of a severity that is folded: error, warning, unknown, info; -1 for the others. */
static int fold_sev(const struct gp_report *r, const char *s)
{
	if (!strcmp(s, "error"))
		return 0;
	if (!strcmp(s, "warning"))
		return 1;
	if (!strcmp(s, "unknown"))
		return 2;
	if (!strcmp(s, "info"))
		return r->info ? 3 : -1;
	return -1;
}

static int known_sev(const char *s)
{
	static const char *const names[] = { "error", "warning", "info", "ok", "unknown", "skipped" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return 1;
	return 0;
}

/* A string field into a key: its length then its bytes ("-" for null), so that no field's text can end
 * one field and begin the next (a subject holding the separator once folded different findings). */
static void key_field(struct gp_buf *key, const char *s)
{
	if (s)
		gp_buf_addf(key, "%zu:%s", strlen(s), s);
	else
		gp_buf_addf(key, "-");
}

static int add_to_group(struct gp_report *r, const struct gp_jv *f, int sev, int h)
{
	const char *id = gp_jv_str(f, "id"), *sv = gp_jv_str(f, "severity");
	const char *subj = gp_jv_str(f, "subject"), *msg = gp_jv_str(f, "message");
	struct gp_buf key = GP_BUF_INIT;
	struct gp_report_group *g;
	int i;

	key_field(&key, id);
	key_field(&key, sv);
	key_field(&key, subj);
	key_field(&key, msg);
	if (key.oom) {
		gp_buf_free(&key);
		return -ENOMEM;
	}
	i = gp_strmap_get(&r->gmap, key.s);
	if (i < 0) {
		if (grow((void **)&r->group, &r->gcap, r->ngroup, sizeof(*r->group)) ||
		    gp_strmap_put(&r->gmap, key.s, r->ngroup)) {
			gp_buf_free(&key);
			return -ENOMEM;
		}
		g = &r->group[r->ngroup];
		memset(g, 0, sizeof(*g));
		g->sev = sev;
		g->id = strdup(id);
		g->severity = strdup(sv);
		g->subject = dup_or_null(subj);
		g->message = dup_or_null(msg);
		g->fix = dup_or_null(gp_jv_str(f, "fix"));
		i = r->ngroup++;
		if (!g->id || !g->severity || (subj && !g->subject) || (msg && !g->message) ||
		    (gp_jv_str(f, "fix") && !g->fix)) {
			gp_buf_free(&key);
			return -ENOMEM;
		}
	}
	gp_buf_free(&key);
	g = &r->group[i];
	if (grow((void **)&g->host, &g->cap, g->nhost, sizeof(*g->host)))
		return -ENOMEM;
	g->host[g->nhost++] = h;
	return 0;
}

/* Member key of o as a whole number in [lo, hi] into *v: 1; absent or null: 0 (*v untouched); anything
 * else (a string, a fraction, out of range, not finite): -1. No cast of a double out of range. */
static int whole_num(const struct gp_jv *o, const char *key, double lo, double hi, double *v)
{
	const struct gp_jv *m = gp_jv_get(o, key);

	if (!m || m->type == GP_JV_NULL)
		return 0;
	if (m->type != GP_JV_NUM || !(m->n >= lo && m->n <= hi) || m->n != floor(m->n))
		return -1;
	*v = m->n;
	return 1;
}

static int doctor_doc(struct gp_report *r, const struct gp_jv *doc, const struct gp_jv *fs, int h,
		      const char *source, int line)
{
	struct gp_report_host *hs = &r->host[h];
	double st;
	int k = 0, rc;

	/* a process's exit status is 0 to 255: 1e300 once became INT_MIN, and that host "clean" */
	if ((rc = whole_num(doc, "exit_status", 0, 255, &st)) < 0)
		return report_bad(r, source, line, hs->name, "\"exit_status\" is no exit status (a whole number, 0 to 255)");
	hs->doctor++;
	if (rc > 0)
		hs->exit_status = (int)st;
	if (r->baseline && (rc = report_facts(r, h, gp_jv_get(doc, "facts"), source, line)))
		return rc;
	hs = &r->host[h];
	if (gp_jv_str(doc, "error")) {
		free(hs->error);
		if (!(hs->error = strdup(gp_jv_str(doc, "error"))))
			return -ENOMEM;
	}
	for (const struct gp_jv *f = fs->kid; f; f = f->next, k++) {
		const char *id = gp_jv_str(f, "id"), *sv = gp_jv_str(f, "severity");
		int sev;

		if (!id || !sv || !known_sev(sv)) {
			rc = report_bad(r, source, line, hs->name, "finding %d has no id or a bad severity", k + 1);
			if (rc)
				return rc;
			continue;
		}
		hs = &r->host[h];
		hs->errors += !strcmp(sv, "error");
		hs->warnings += !strcmp(sv, "warning");
		hs->unknown += !strcmp(sv, "unknown");
		if ((sev = fold_sev(r, sv)) >= 0 && (rc = add_to_group(r, f, sev, h)))
			return rc;
	}
	return 0;
}

/* One bench row (bench --json's results[] or a --jsonl line): its GB/s, when it has one. A string field
 * longer than REPORT_BENCH_FIELD_MAX is malformed input (bench writes names like GPU0, mlx5_0, p2p). */
static int bench_row(struct gp_report *r, const struct gp_jv *row, int h, const char *source, int line)
{
	static const char *const keys[] = { "mode", "path", "src", "dst", "memory", "p2p", "op", "engine" };
	struct gp_buf key = GP_BUF_INIT;
	struct gp_report_bench *b;
	double gbps, size = 0;
	int i;

	if (!gp_jv_num(row, "gbps", &gbps) || gp_jv_str(row, "skipped"))
		return 0; /* a latency row, or one not run */
	if (!isfinite(gbps) || gbps < 0)
		return report_bad(r, source, line, r->host[h].name, "bench row: \"gbps\" is no figure (finite, 0 or more)");
	/* bytes, below 2^64 (the cast to uint64_t stays defined); 1e30 once printed as 0 */
	if (whole_num(row, "size", 0, 18446744073709549568.0, &size) < 0)
		return report_bad(r, source, line, r->host[h].name, "bench row: \"size\" is no size (whole bytes, "
				  "below 2^64)");
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *v = gp_jv_str(row, keys[k]);

		if (v && strlen(v) > REPORT_BENCH_FIELD_MAX)
			return report_bad(r, source, line, r->host[h].name, "bench row: \"%s\" longer than %d bytes",
					  keys[k], REPORT_BENCH_FIELD_MAX);
		key_field(&key, v);
	}
	gp_buf_addf(&key, "%.0f", size);
	if (key.oom) {
		gp_buf_free(&key);
		return -ENOMEM;
	}
	i = gp_strmap_get(&r->bmap, key.s);
	if (i < 0) {
		if (grow((void **)&r->bench, &r->bcap, r->nbench, sizeof(*r->bench)) ||
		    gp_strmap_put(&r->bmap, key.s, r->nbench)) {
			gp_buf_free(&key);
			return -ENOMEM;
		}
		b = &r->bench[r->nbench];
		memset(b, 0, sizeof(*b));
		b->mode = dup_or_null(gp_jv_str(row, "mode"));
		b->path = dup_or_null(gp_jv_str(row, "path"));
		b->src = dup_or_null(gp_jv_str(row, "src"));
		b->dst = dup_or_null(gp_jv_str(row, "dst"));
		b->memory = dup_or_null(gp_jv_str(row, "memory"));
		b->p2p = dup_or_null(gp_jv_str(row, "p2p"));
		b->op = dup_or_null(gp_jv_str(row, "op"));
		b->engine = dup_or_null(gp_jv_str(row, "engine"));
		b->size = (uint64_t)size;
		i = r->nbench++;
	}
	gp_buf_free(&key);
	b = &r->bench[i];
	if (grow((void **)&b->v, &b->cap, b->nv, sizeof(*b->v)))
		return -ENOMEM;
	b->v[b->nv].host = h;
	b->v[b->nv++].gbps = gbps;
	r->host[h].bench++;
	return 0;
}

int report_doc(struct gp_report *r, const struct gp_jv *doc, const char *host, const char *source, int line)
{
	const struct gp_jv *fs = gp_jv_get(doc, "findings"), *res = gp_jv_get(doc, "results");
	int h, rc;

	if (doc->type != GP_JV_OBJ)
		return report_bad(r, source, line, host, "not a JSON object");
	if (!fs && !res && !gp_jv_get(doc, "mode") && gp_jv_get(doc, "exit_status") && !gp_jv_get(doc, "checks"))
		return 0; /* a closing summary record (exit status, messages): nothing to fold */
	if (!host)
		host = gp_jv_str(doc, "host");
	if (!host || !*host)
		return report_bad(r, source, line, NULL, "no host: neither a 'host: ' label nor a \"host\" member");
	if (!gp_hostlist_valid(host)) {
		char ex[64];

		report_excerpt(host, ex, sizeof(ex));
		return report_bad(r, source, line, NULL, "\"host\" is no host name: '%s'", ex);
	}
	if ((h = report_host(r, host)) < 0)
		return h;
	if (fs && fs->type == GP_JV_ARR)
		return doctor_doc(r, doc, fs, h, source, line);
	if (res && res->type == GP_JV_ARR) {
		for (const struct gp_jv *row = res->kid; row; row = row->next)
			if (row->type == GP_JV_OBJ && (rc = bench_row(r, row, h, source, line)))
				return rc;
		return 0;
	}
	if (gp_jv_get(doc, "mode") && gp_jv_get(doc, "gbps"))
		return bench_row(r, doc, h, source, line);
	return report_bad(r, source, line, host, "neither doctor nor bench output (no \"findings\" or \"results\")");
}

int gp_report_expect(struct gp_report *r, const char *hostlist, struct gp_err *e)
{
	int rc = gp_hostlist_parse(&r->expect, hostlist, e);

	if (!rc)
		r->have_expect = 1;
	return rc;
}

void gp_report_totals(const struct gp_report *r, struct gp_report_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < r->ngroup; i++) {
		t->groups[r->group[i].sev]++;
		t->hosts[r->group[i].sev] += r->group[i].nhost;
	}
	for (int i = 0; i < r->nbench; i++)
		t->nlow += r->bench[i].nlow;
}
