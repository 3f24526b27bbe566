/* gpup2p doctor — findings as data: a growable list, built by the checks through these helpers; their
 * texts, BDFs and evidence taken from the list's arenas (gpup2p/arena.h), freed with it. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpup2p/arena.h"
#include "gpup2p/strmap.h"

/* A list's findings' memory: their texts in one arena, their bdf and ev arrays in another, where the
 * newest finding's grow in place (gp_arena_grow), each evidence key kept once (a few hundred keys name
 * a hundred thousand values on a host of SR-IOV NICs). */
struct gp_findings_mem {
	struct gp_arena text;
	struct gp_arena arrays;
	struct gp_strmap keys;   /* an evidence key -> its index in key[] */
	char **key;
	size_t nkey, capkey;
};

/* key as kept in m (one copy of each), or NULL out of memory. */
static char *mem_key(struct gp_findings_mem *m, const char *key)
{
	int i = gp_strmap_get(&m->keys, key);
	char **v;

	if (i >= 0)
		return m->key[i];
	if (m->nkey == m->capkey) {
		if (!(v = realloc(m->key, sizeof(*v) * (m->capkey ? 2 * m->capkey : 64))))
			return NULL;
		m->key = v;
		m->capkey = m->capkey ? 2 * m->capkey : 64;
	}
	if (m->nkey > (size_t)INT_MAX - 1 || !(m->key[m->nkey] = gp_arena_str(&m->text, key)) ||
	    gp_strmap_put(&m->keys, key, (int)m->nkey))
		return NULL;
	return m->key[m->nkey++];
}

/* Room for one more of *v's n items of size each, *cap of them held: grown in m's arrays arena by one
 * where it is the last thing taken there (the newest finding's, as a check adds to it), else copied at
 * twice its length (a finding added to among others: copies double, never one per item). 0, or -1 out
 * of memory. */
static int mem_grow(struct gp_findings_mem *m, void **v, int n, int *cap, size_t each)
{
	int want = n ? 2 * n : 1;
	void *nv;

	if (n < *cap)
		return 0;
	if (n && gp_arena_extend(&m->arrays, *v, each * (size_t)n, each * ((size_t)n + 1))) {
		*cap = n + 1;
		return 0;
	}
	if (n > INT_MAX / 2 || !(nv = gp_arena_take(&m->arrays, each * (size_t)want, sizeof(void *))))
		return -1;
	if (n)
		memcpy(nv, *v, each * (size_t)n);
	*v = nv;
	*cap = want;
	return 0;
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
	if (!l->mem && !(l->mem = calloc(1, sizeof(*l->mem)))) {
		l->nomem = 1;
		return NULL;
	}
	f = &l->v[l->n];
	memset(f, 0, sizeof(*f));
	f->check = c->cur;
	f->sev = sev;
	f->mem = l->mem;
	f->subject = gp_arena_str(&l->mem->text, subject ? subject : "system");
	va_start(ap, fmt);
	f->message = f->subject ? gp_arena_vfmt(&l->mem->text, fmt, ap) : NULL;
	va_end(ap);
	if (!f->message) {
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
	va_start(ap, fmt);
	f->fix = gp_arena_vfmt(&f->mem->text, fmt, ap); /* one it replaces stays until the list is freed */
	va_end(ap);
}

void gp_finding_bdf(struct gp_finding *f, const char *bdf)
{
	if (!f)
		return;
	for (int i = 0; i < f->nbdf; i++)
		if (!strcmp(f->bdf[i], bdf))
			return;
	if (mem_grow(f->mem, (void **)&f->bdf, f->nbdf, &f->capbdf, sizeof(*f->bdf)))
		return;
	snprintf(f->bdf[f->nbdf++], GP_BDF_LEN, "%s", bdf);
}

void gp_finding_ev(struct gp_finding *f, const char *key, const char *fmt, ...)
{
	struct gp_kv *v;
	va_list ap;

	if (!f || mem_grow(f->mem, (void **)&f->ev, f->nev, &f->capev, sizeof(*f->ev)))
		return;
	v = &f->ev[f->nev];
	va_start(ap, fmt);
	v->value = gp_arena_vfmt(&f->mem->text, fmt, ap);
	va_end(ap);
	if (v->value && (v->key = mem_key(f->mem, key)))
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
	for (int i = 0; i < l->n; i++)
		free(l->v[i].fig);
	if (l->mem) {
		gp_arena_free(&l->mem->text);
		gp_arena_free(&l->mem->arrays);
		gp_strmap_free(&l->mem->keys);
		free(l->mem->key);
		free(l->mem);
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
