/* gpup2p doctor — findings as data: a growable list, built by the checks through these helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char *vfmt(const char *fmt, va_list ap)
{
	char *s = NULL;

	return vasprintf(&s, fmt, ap) < 0 ? NULL : s;
}

struct gp_finding *gp_doctor_add(struct gp_doctor_ctx *c, enum gp_sev sev, const char *subject, const char *fmt, ...)
{
	struct gp_findings *l = &c->out;
	struct gp_finding *f;
	va_list ap;

	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 32;
		struct gp_finding *v = realloc(l->v, sizeof(*v) * (size_t)cap);

		if (!v) {
			l->nomem = 1;
			return NULL;
		}
		l->v = v;
		l->cap = cap;
	}
	f = &l->v[l->n];
	memset(f, 0, sizeof(*f));
	f->check = c->cur;
	f->sev = sev;
	f->subject = strdup(subject ? subject : "system");
	va_start(ap, fmt);
	f->message = vfmt(fmt, ap);
	va_end(ap);
	if (!f->subject || !f->message) {
		free(f->subject);
		free(f->message);
		l->nomem = 1;
		return NULL;
	}
	l->n++;
	return f;
}

struct gp_finding *gp_doctor_missing(struct gp_doctor_ctx *c, const char *subject, const char *what, int err)
{
	/* a snapshot taken live lists what that system could not give: unknown there, so here */
	int at_source = c->root->live ? 0 : gp_snapshot_unreadable(&c->src.snap, what);
	struct gp_finding *f;

	if (at_source)
		err = at_source;
	err = err < 0 ? -err : err;
	/* under a root, only a file that is not there was not captured: one that is there but refused
	 * (a link out of the root, a pipe, a folder) is unknown */
	if (c->root->live || at_source || (err != ENOENT && err != ENOTDIR))
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, subject, "%s could not be read: %s", what, gp_root_strerror(err));
	else
		f = gp_doctor_add(c, GP_SEV_SKIPPED, subject, "%s is not in the root %s (not captured)", what, c->root->dir);
	gp_finding_ev(f, what, "%s", gp_root_strerror(err));
	return f;
}

void gp_finding_fix(struct gp_finding *f, const char *fmt, ...)
{
	va_list ap;

	if (!f)
		return;
	free(f->fix);
	va_start(ap, fmt);
	f->fix = vfmt(fmt, ap);
	va_end(ap);
}

void gp_finding_bdf(struct gp_finding *f, const char *bdf)
{
	char (*v)[GP_BDF_LEN];

	if (!f)
		return;
	for (int i = 0; i < f->nbdf; i++)
		if (!strcmp(f->bdf[i], bdf))
			return;
	v = realloc(f->bdf, sizeof(*v) * (size_t)(f->nbdf + 1));
	if (!v)
		return;
	f->bdf = v;
	snprintf(f->bdf[f->nbdf++], GP_BDF_LEN, "%s", bdf);
}

void gp_finding_ev(struct gp_finding *f, const char *key, const char *fmt, ...)
{
	struct gp_kv *v;
	va_list ap;

	if (!f)
		return;
	v = realloc(f->ev, sizeof(*v) * (size_t)(f->nev + 1));
	if (!v)
		return;
	f->ev = v;
	va_start(ap, fmt);
	v[f->nev].value = vfmt(fmt, ap);
	va_end(ap);
	v[f->nev].key = strdup(key);
	if (!v[f->nev].key || !v[f->nev].value) {
		free(v[f->nev].key);
		free(v[f->nev].value);
		return;
	}
	f->nev++;
}

void gp_finding_figure(struct gp_finding *f, int src, int dst, double bytes_per_s)
{
	struct gp_figure *v;

	if (!f)
		return;
	v = realloc(f->fig, sizeof(*v) * (size_t)(f->nfig + 1));
	if (!v)
		return;
	f->fig = v;
	v[f->nfig++] = (struct gp_figure){ .src = src, .dst = dst, .bytes_per_s = bytes_per_s };
}

void gp_findings_free(struct gp_findings *l)
{
	for (int i = 0; i < l->n; i++) {
		struct gp_finding *f = &l->v[i];

		free(f->subject);
		free(f->message);
		free(f->fix);
		free(f->bdf);
		for (int k = 0; k < f->nev; k++) {
			free(f->ev[k].key);
			free(f->ev[k].value);
		}
		free(f->ev);
		free(f->fig);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int gp_doctor_fit(const struct gp_findings *f, const size_t *size, size_t budget, unsigned char *keep)
{
	static const enum gp_sev order[] = { GP_SEV_ERROR, GP_SEV_WARNING, GP_SEV_UNKNOWN, GP_SEV_INFO, GP_SEV_OK,
					     GP_SEV_SKIPPED };
	size_t used = 0;
	int left = 0, full = 0;

	memset(keep, 0, (size_t)f->n);
	/* the first finding that does not fit ends the list: no later (less urgent) one slips in */
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++)
		for (int i = 0; i < f->n; i++) {
			if (f->v[i].sev != order[o])
				continue;
			if (!full && size[i] <= budget - used) {
				keep[i] = 1;
				used += size[i];
			} else {
				full = 1;
				left++;
			}
		}
	return left;
}
