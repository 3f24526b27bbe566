/* gpup2p — report: fold what the hosts sent into host ranges, missing hosts and bench outliers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/bench.h"
#include "report/internal.h"

char *gp_report_range(const struct gp_report *r, const int *idx, int n)
{
	char **names = malloc((size_t)(n > 0 ? n : 1) * sizeof(*names));
	char *s;

	if (!names)
		return NULL;
	for (int i = 0; i < n; i++)
		names[i] = r->host[idx[i]].name;
	s = gp_hostlist_format(names, n);
	free(names);
	return s;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_group(const void *a, const void *b)
{
	const struct gp_report_group *x = a, *y = b;
	int c = x->sev - y->sev;

	if (!c)
		c = strcmp(x->id, y->id);
	if (!c)
		c = gp_hostlist_cmp(x->subject ? x->subject : "", y->subject ? y->subject : "");
	if (!c)
		c = y->nhost - x->nhost;
	return c ? c : cmp_str(x->message, y->message);
}

static int cmp_bench(const void *a, const void *b)
{
	const struct gp_report_bench *x = a, *y = b;
	int c = cmp_str(x->mode, y->mode);

	if (!c)
		c = cmp_str(x->path, y->path);
	if (!c)
		c = gp_hostlist_cmp(x->src ? x->src : "", y->src ? y->src : "");
	if (!c)
		c = gp_hostlist_cmp(x->dst ? x->dst : "", y->dst ? y->dst : "");
	if (!c && x->size != y->size)
		c = x->size < y->size ? -1 : 1;
	if (!c)
		c = cmp_str(x->memory, y->memory);
	if (!c)
		c = cmp_str(x->p2p, y->p2p);
	if (!c)
		c = cmp_str(x->op, y->op);
	return c ? c : cmp_str(x->engine, y->engine);
}

static int cmp_sample(const void *a, const void *b, void *arg)
{
	const struct gp_report *r = arg;

	return gp_hostlist_cmp(r->host[((const struct gp_report_sample *)a)->host].name,
			       r->host[((const struct gp_report_sample *)b)->host].name);
}

/* Drop repeats from a sorted int array; the new length. */
static int uniq_int(int *v, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

/* One figure per host (its last record), the median, and the hosts below below*median. */
static int fold_bench(struct gp_report *r, struct gp_report_bench *b)
{
	struct gp_stats st;
	double *x;
	int k = 0;

	int *last = malloc((size_t)(r->nhost > 0 ? r->nhost : 1) * sizeof(*last));

	if (!last)
		return -ENOMEM;
	/* a host that sent the figure more than once: its last record */
	for (int i = 0; i < r->nhost; i++)
		last[i] = -1;
	for (int i = 0; i < b->nv; i++)
		last[b->v[i].host] = i;
	for (int i = 0; i < b->nv; i++)
		if (last[b->v[i].host] == i)
			b->v[k++] = b->v[i];
	free(last);
	b->nv = k;
	qsort_r(b->v, (size_t)k, sizeof(*b->v), cmp_sample, r);
	if (!(x = malloc((size_t)(k > 0 ? k : 1) * sizeof(*x))) || !(b->low = calloc((size_t)(k > 0 ? k : 1), sizeof(*b->low)))) {
		free(x);
		return -ENOMEM;
	}
	for (int i = 0; i < k; i++)
		x[i] = b->v[i].gbps;
	gp_stats_compute(x, k, &st);
	b->median = st.median;
	free(x);
	for (int i = 0; i < k; i++)
		if (b->v[i].gbps < r->below * b->median)
			b->low[b->nlow++] = b->v[i];
	return 0;
}

/* Range strings of the expected hosts that sent nothing, and of the hosts that were not expected. */
static int fold_expect(struct gp_report *r)
{
	struct gp_hostlist miss = { 0 }, extra = { 0 };
	struct gp_strmap want = { 0 };
	int rc = 0;

	gp_hostlist_uniq(&r->expect);
	for (int i = 0; !rc && i < r->expect.n; i++)
		if (gp_strmap_get(&r->hmap, r->expect.v[i]) < 0)
			rc = gp_hostlist_add(&miss, r->expect.v[i]);
		else
			rc = gp_strmap_put(&want, r->expect.v[i], i);
	for (int i = 0; !rc && i < r->nhost; i++)
		if (gp_strmap_get(&want, r->host[i].name) < 0)
			rc = gp_hostlist_add(&extra, r->host[i].name);
	if (!rc) {
		r->nmissing = miss.n;
		r->nunexpected = extra.n;
		r->missing_range = gp_hostlist_format(miss.v, miss.n);
		r->unexpected_range = gp_hostlist_format(extra.v, extra.n);
		rc = r->missing_range && r->unexpected_range ? 0 : -ENOMEM;
	}
	gp_hostlist_free(&miss);
	gp_hostlist_free(&extra);
	gp_strmap_free(&want);
	return rc;
}

/* A doctor exit status that is no finding count: could not run (3), usage (64), unavailable (69)... */
static int odd_status(int s)
{
	return s > 2;
}

static int cmp_status(const void *a, const void *b, void *arg)
{
	const struct gp_report_host *x = &((const struct gp_report *)arg)->host[*(const int *)a];
	const struct gp_report_host *y = &((const struct gp_report *)arg)->host[*(const int *)b];

	if (x->exit_status != y->exit_status)
		return x->exit_status - y->exit_status;
	return cmp_str(x->error, y->error);
}

/* The clean hosts; the hosts whose doctor did not run, one line per exit status and error. */
static int fold_hosts(struct gp_report *r)
{
	int *clean = calloc((size_t)(r->nhost > 0 ? r->nhost : 1), sizeof(int));
	int *odd = calloc((size_t)(r->nhost > 0 ? r->nhost : 1), sizeof(int));
	int nodd = 0, rc = 0;

	r->status = calloc((size_t)(r->nhost > 0 ? r->nhost : 1), sizeof(*r->status));
	if (!clean || !odd || !r->status) {
		free(clean);
		free(odd);
		return -ENOMEM;
	}
	for (int i = 0; i < r->nhost; i++) {
		const struct gp_report_host *h = &r->host[i];

		r->ndoctor += h->doctor > 0;
		if (h->doctor && !h->errors && !h->warnings && !odd_status(h->exit_status))
			clean[r->nclean++] = i;
		if (h->doctor && odd_status(h->exit_status))
			odd[nodd++] = i;
	}
	if (!(r->clean_range = gp_report_range(r, clean, r->nclean)))
		rc = -ENOMEM;
	qsort_r(odd, (size_t)nodd, sizeof(*odd), cmp_status, r);
	for (int i = 0, j; !rc && i < nodd; i = j) {
		struct gp_report_status *st = &r->status[r->nstatus];

		for (j = i + 1; j < nodd && !cmp_status(&odd[i], &odd[j], r); j++)
			;
		st->exit_status = r->host[odd[i]].exit_status;
		st->error = r->host[odd[i]].error;
		st->nhost = j - i;
		if (!(st->range = gp_report_range(r, odd + i, j - i)))
			rc = -ENOMEM;
		else
			r->nstatus++;
	}
	free(clean);
	free(odd);
	return rc;
}

struct bad_key {
	int block, line, seq;
};

static int cmp_bad(const void *a, const void *b)
{
	const struct bad_key *x = a, *y = b;

	if (x->block != y->block)
		return x->block - y->block;
	if (x->line != y->line)
		return x->line - y->line;
	return x->seq - y->seq;
}

/* Malformed entries in input order: by source (in the order read), then line. */
static int sort_bad(struct gp_report *r)
{
	struct bad_key *k;
	struct gp_report_bad *v;

	if (r->nbad < 2)
		return 0;
	k = malloc((size_t)(r->nbad > 0 ? r->nbad : 1) * sizeof(*k));
	v = malloc((size_t)r->nbad * sizeof(*v));
	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	for (int i = 0, blk = 0; i < r->nbad; i++) {
		blk += i && strcmp(r->bad[i].source, r->bad[i - 1].source);
		k[i] = (struct bad_key){ blk, r->bad[i].line, i };
	}
	qsort(k, (size_t)r->nbad, sizeof(*k), cmp_bad);
	for (int i = 0; i < r->nbad; i++)
		v[i] = r->bad[k[i].seq];
	memcpy(r->bad, v, (size_t)r->nbad * sizeof(*v));
	free(k);
	free(v);
	return 0;
}

int gp_report_fold(struct gp_report *r, double below, struct gp_err *e)
{
	int err = 0, warn = 0, rc;

	r->below = below;
	for (int i = 0; i < r->ngroup; i++) {
		struct gp_report_group *g = &r->group[i];

		qsort(g->host, (size_t)g->nhost, sizeof(*g->host), cmp_int);
		g->nhost = uniq_int(g->host, g->nhost);
		if (!(g->range = gp_report_range(r, g->host, g->nhost)))
			return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
		err |= g->sev == 0;
		warn |= g->sev == 1;
	}
	if (r->ngroup > 1)
		qsort(r->group, (size_t)r->ngroup, sizeof(*r->group), cmp_group);
	if (r->nbench > 1)
		qsort(r->bench, (size_t)r->nbench, sizeof(*r->bench), cmp_bench);
	for (int i = 0; i < r->nbench; i++) {
		if (fold_bench(r, &r->bench[i]))
			return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
		warn |= r->bench[i].nlow > 0;
	}
	rc = sort_bad(r);
	if (!rc)
		rc = fold_hosts(r);
	if (!rc && r->have_expect)
		rc = fold_expect(r);
	if (rc)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	warn |= r->nmissing > 0 || r->nbad > 0 || r->nstatus > 0 || r->nhost == 0;
	r->exit_code = err ? 2 : warn ? 1 : 0;
	return 0;
}

void gp_report_free(struct gp_report *r)
{
	for (int i = 0; i < r->nhost; i++) {
		free(r->host[i].name);
		free(r->host[i].error);
		if (r->host[i].facts)
			gp_expect_free(r->host[i].facts);
		free(r->host[i].facts);
	}
	for (int i = 0; i < r->ngroup; i++) {
		struct gp_report_group *g = &r->group[i];

		free(g->id);
		free(g->severity);
		free(g->subject);
		free(g->message);
		free(g->fix);
		free(g->host);
		free(g->range);
	}
	for (int i = 0; i < r->nbench; i++) {
		struct gp_report_bench *b = &r->bench[i];

		free(b->mode);
		free(b->path);
		free(b->src);
		free(b->dst);
		free(b->memory);
		free(b->p2p);
		free(b->op);
		free(b->engine);
		free(b->v);
		free(b->low);
	}
	for (int i = 0; i < r->nbad; i++) {
		free(r->bad[i].source);
		free(r->bad[i].host);
		free(r->bad[i].why);
	}
	for (int i = 0; i < r->nstatus; i++)
		free(r->status[i].range);
	free(r->status);
	free(r->host);
	free(r->group);
	free(r->bench);
	free(r->bad);
	free(r->clean_range);
	free(r->missing_range);
	free(r->unexpected_range);
	gp_strmap_free(&r->hmap);
	gp_strmap_free(&r->gmap);
	gp_strmap_free(&r->bmap);
	gp_hostlist_free(&r->expect);
	memset(r, 0, sizeof(*r));
}
