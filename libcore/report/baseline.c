/* gpup2p — report --baseline: the expectation (gpup2p/expect.h) the fleet's majority agrees on,
 * derived from the "facts" of each host's doctor --json, and the hosts that deviate from it. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/buf.h"
#include "report/internal.h"

/* A whole-number member in [0, hi], or null / absent: -1; anything else: -2. */
static int fact_int(const struct gp_jv *o, const char *key, int hi)
{
	const struct gp_jv *m = gp_jv_get(o, key);

	if (!m || m->type == GP_JV_NULL)
		return -1;
	if (m->type != GP_JV_NUM || !(m->n >= 0 && m->n <= hi) || m->n != floor(m->n))
		return -2;
	return (int)m->n;
}

/* One device of "facts": 0, 1 when malformed (*why says what). */
static int fact_dev(struct gp_expect *x, int kind, const struct gp_jv *o, const char **why)
{
	const char *bdf = gp_jv_str(o, "bdf"), *model = gp_jv_str(o, "model"), *name = gp_jv_str(o, "name");
	const struct gp_jv *rate = gp_jv_get(o, "rate_gbps");
	struct gp_expect_dev *d;

	if (o->type != GP_JV_OBJ || !bdf || !*bdf || strlen(bdf) >= GP_EXPECT_BDF_LEN || gp_expect_find(x, kind, bdf))
		return *why = "a device without a \"bdf\", or one named twice", 1;
	if (!(d = gp_expect_add(x, kind, bdf)))
		return -ENOMEM;
	x->count[kind]++;
	snprintf(d->name, sizeof(d->name), "%s", name ? name : "");
	if (model && strlen(model) < sizeof(d->model))
		snprintf(d->model, sizeof(d->model), "%s", model);
	d->gen = fact_int(o, "gen", 6);
	d->width = fact_int(o, "width", 32);
	d->nvlinks = kind == GP_EXPECT_GPU ? fact_int(o, "nvlinks", 64) : -1;
	d->numa = fact_int(o, "numa", 1023);
	if (rate && rate->type == GP_JV_NUM && isfinite(rate->n) && rate->n > 0 && rate->n < 1e6)
		d->rate = rate->n;
	else if (rate && rate->type != GP_JV_NULL)
		return *why = "\"rate_gbps\" is no rate", 1;
	if (d->gen == -2 || d->width == -2 || d->nvlinks == -2 || d->numa == -2)
		return *why = "\"gen\", \"width\", \"nvlinks\" or \"numa\" out of range", 1;
	return 0;
}

int report_facts(struct gp_report *r, int h, const struct gp_jv *facts, const char *source, int line)
{
	static const char *const arr[GP_EXPECT_KINDS] = { "gpus", "nics" };
	struct gp_report_host *hs = &r->host[h];
	struct gp_expect *x;
	const char *why = NULL;
	int rc = 0;

	if (!facts || facts->type == GP_JV_NULL)
		return 0; /* an older doctor, or one that could not run: no facts to vote with */
	if (!(x = malloc(sizeof(*x))))
		return -ENOMEM;
	gp_expect_init(x);
	x->count[GP_EXPECT_GPU] = x->count[GP_EXPECT_NIC] = 0;
	for (int k = 0; !rc && k < GP_EXPECT_KINDS; k++) {
		const struct gp_jv *a = gp_jv_get(facts, arr[k]);

		if (!a || a->type != GP_JV_ARR) {
			why = "\"facts\" without its \"gpus\" and \"nics\" lists";
			rc = 1;
		}
		for (const struct gp_jv *o = a && !rc ? a->kid : NULL; o && !rc; o = o->next)
			rc = fact_dev(x, k, o, &why);
	}
	if (rc) {
		gp_expect_free(x);
		free(x);
		return rc < 0 ? rc : report_bad(r, source, line, hs->name, "facts: %s", why);
	}
	if (hs->facts) { /* the host's last document stands */
		gp_expect_free(hs->facts);
		free(hs->facts);
	}
	hs->facts = x;
	return 0;
}

/* --- the majority ------------------------------------------------------------------------------- */

/* The value most devices in v[0..n) have for field f (ties: the first seen); NULL when none knows it. */
static const struct gp_expect_dev *mode(const struct gp_expect_dev *const *v, int n, enum gp_expect_field f)
{
	const struct gp_expect_dev *best = NULL;
	char a[160], b[160];
	int most = 0;

	for (int i = 0; i < n; i++) {
		int votes = 0;

		if (!gp_expect_known(v[i], f))
			continue;
		gp_expect_value(v[i], f, a, sizeof(a));
		for (int k = 0; k < n; k++)
			votes += gp_expect_known(v[k], f) && !strcmp(gp_expect_value(v[k], f, b, sizeof(b)), a);
		if (votes > most) {
			most = votes;
			best = v[i];
		}
	}
	return best;
}

/* Field f of src into dst (and the line it was stated on). */
static void copy_field(struct gp_expect_dev *dst, const struct gp_expect_dev *src, enum gp_expect_field f)
{
	switch (f) {
	case GP_XF_MODEL: memcpy(dst->model, src->model, sizeof(dst->model)); break;
	case GP_XF_LINK: dst->gen = src->gen, dst->width = src->width; break;
	case GP_XF_NVLINKS: dst->nvlinks = src->nvlinks; break;
	case GP_XF_NUMA: dst->numa = src->numa; break;
	case GP_XF_RATE: dst->rate = src->rate; break;
	default: break;
	}
}

/* Clear field f of d (not stated). */
static void clear_field(struct gp_expect_dev *d, enum gp_expect_field f)
{
	struct gp_expect_dev none;

	gp_expect_dev_init(&none, d->kind);
	copy_field(d, &none, f);
}

/* Each device (kind, BDF) most hosts have, with the value most of those hosts agree on per field. */
static int per_device(const struct gp_report *r, struct gp_expect *out, int nf, const struct gp_expect_dev **v)
{
	for (int h = 0; h < r->nhost; h++) {
		const struct gp_expect *x = r->host[h].facts;

		for (int i = 0; x && i < x->ndev; i++) {
			const struct gp_expect_dev *d = &x->dev[i];
			struct gp_expect_dev *o;
			int n = 0;

			if (gp_expect_find(out, d->kind, d->bdf))
				continue;
			for (int k = 0; k < r->nhost; k++)
				if (r->host[k].facts && (v[n] = gp_expect_find(r->host[k].facts, d->kind, d->bdf)))
					n++;
			if (2 * n <= nf) /* on half the hosts or fewer: no device of the baseline */
				continue;
			if (!(o = gp_expect_add(out, d->kind, d->bdf)))
				return -ENOMEM;
			for (int f = 0; f < GP_XF_N; f++) {
				const struct gp_expect_dev *m = gp_expect_field_of(d->kind, f) ? mode(v, n, f) : NULL;

				if (m)
					copy_field(o, m, f);
			}
		}
	}
	return 0;
}

int gp_report_baseline(const struct gp_report *r, struct gp_expect *out, struct gp_err *e)
{
	const struct gp_expect_dev **v;
	int nf = 0, cap = r->nhost + 1; /* the hosts, and then the baseline's devices of a kind */

	gp_expect_init(out);
	for (int h = 0; h < r->nhost; h++)
		if (r->host[h].facts) {
			nf++;
			cap += r->host[h].facts->ndev;
		}
	if (!nf)
		return 0;
	if (!(v = calloc((size_t)cap, sizeof(*v))))
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	/* counts: the number most hosts have */
	for (int k = 0; k < GP_EXPECT_KINDS; k++) {
		int best = 0, most = 0;

		for (int h = 0; h < r->nhost; h++) {
			int votes = 0, c = r->host[h].facts ? r->host[h].facts->count[k] : -1;

			for (int i = 0; c >= 0 && i < r->nhost; i++)
				votes += r->host[i].facts && r->host[i].facts->count[k] == c;
			if (votes > most)
				most = votes, best = c;
		}
		out->count[k] = best;
	}
	if (per_device(r, out, nf, v)) {
		free(v);
		gp_expect_free(out);
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	/* the line for every device of a kind: what most of the baseline's devices have; a device keeps its
	 * own line only where it differs, and always its NUMA node (the placement names each device) */
	for (int k = 0; k < GP_EXPECT_KINDS; k++) {
		int n = 0;

		for (int i = 0; i < out->ndev; i++)
			if (out->dev[i].kind == k)
				v[n++] = &out->dev[i];
		for (int f = 0; f < GP_XF_N; f++) {
			const struct gp_expect_dev *m = f != GP_XF_NUMA && gp_expect_field_of(k, f) ? mode(v, n, f) : NULL;
			char a[160], b[160];

			if (!m)
				continue;
			copy_field(&out->all[k], m, f);
			gp_expect_value(&out->all[k], f, a, sizeof(a));
			for (int i = 0; i < n; i++)
				if (!strcmp(gp_expect_value(v[i], f, b, sizeof(b)), a))
					clear_field((struct gp_expect_dev *)v[i], f);
		}
	}
	free(v);
	return 0;
}

/* --- the hosts that deviate --------------------------------------------------------------------- */

static const char *const kind_word[GP_EXPECT_KINDS] = { "GPU", "NIC" };

int gp_report_deviations(const struct gp_report *r, const struct gp_expect *want, int h, struct gp_buf *out)
{
	const struct gp_expect *x = r->host[h].facts;
	char hv[160], wv[160];
	int n = 0;

	if (!x)
		return 0;
	for (int k = 0; k < GP_EXPECT_KINDS; k++)
		if (want->count[k] >= 0 && x->count[k] != want->count[k]) {
			gp_buf_addf(out, "%s%d %ss, expected %d", n++ ? "; " : "", x->count[k], kind_word[k], want->count[k]);
		}
	for (int i = 0; i < want->ndev; i++)
		if (!gp_expect_find(x, want->dev[i].kind, want->dev[i].bdf))
			gp_buf_addf(out, "%sno %s at %s", n++ ? "; " : "", kind_word[want->dev[i].kind], want->dev[i].bdf);
	for (int i = 0; i < x->ndev; i++) {
		const struct gp_expect_dev *d = &x->dev[i];

		for (int f = 0; f < GP_XF_N; f++) {
			const struct gp_expect_dev *w = gp_expect_want(want, d->kind, d->bdf, f);
			enum gp_expect_verdict v = gp_expect_judge(d, w, f);

			if (v != GP_XV_BELOW && v != GP_XV_ABOVE)
				continue;
			gp_buf_addf(out, "%s%s %s %s %s, expected %s", n++ ? "; " : "", d->name[0] ? d->name : kind_word[d->kind],
				    d->bdf, gp_expect_field_name(f), gp_expect_value(d, f, hv, sizeof(hv)),
				    gp_expect_value(w, f, wv, sizeof(wv)));
		}
	}
	return out->oom ? -ENOMEM : n;
}
