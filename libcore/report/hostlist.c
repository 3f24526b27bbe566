/* gpup2p — host lists: expand Slurm/pdsh ranges, fold names back into them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/hostlist.h"

#define NUM_DIGITS_MAX 18

int gp_hostlist_name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '.' || c == '_';
}

int gp_hostlist_valid(const char *name)
{
	size_t n = 0;

	while (name[n] && n < GP_HOSTNAME_MAX && gp_hostlist_name_char((unsigned char)name[n]))
		n++;
	return n && !name[n];
}

int gp_hostlist_add(struct gp_hostlist *h, const char *name)
{
	char *d;

	if (h->n == h->cap) {
		int cap = h->cap ? h->cap * 2 : 64;
		char **v = realloc(h->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	if (!(d = strdup(name)))
		return -ENOMEM;
	h->v[h->n++] = d;
	return 0;
}

void gp_hostlist_free(struct gp_hostlist *h)
{
	for (int i = 0; i < h->n; i++)
		free(h->v[i]);
	free(h->v);
	memset(h, 0, sizeof(*h));
}

struct expand {
	struct gp_hostlist *h;
	struct gp_err *e;
	const char *expr;
	int added;
};

/* One number of a bracket at *p: digits only, at most NUM_DIGITS_MAX. */
static int bracket_num(struct expand *x, const char **p, unsigned long long *v, int *width)
{
	const char *s = *p;

	*v = 0;
	while (**p >= '0' && **p <= '9' && *p - s < NUM_DIGITS_MAX)
		*v = *v * 10 + (unsigned long long)(*(*p)++ - '0');
	if (*p == s || (**p >= '0' && **p <= '9'))
		return gp_err_set(x->e, GP_E_USAGE, EINVAL, "host list '%s': %s at '%.12s' (ranges are like node[01-04,07])",
				  x->expr, *p == s ? "a number expected" : "number too long", s);
	*width = s[0] == '0' && *p - s > 1 ? (int)(*p - s) : 0;
	return 0;
}

/* Expand item[0..len) (text and [ranges]) after the name built so far in buf[0..blen). */
static int expand_item(struct expand *x, char *buf, size_t blen, const char *item, size_t len)
{
	const char *p = item, *end = item + len, *close;

	while (p < end && *p != '[') {
		if (!gp_hostlist_name_char((unsigned char)*p))
			return gp_err_set(x->e, GP_E_USAGE, EINVAL, "host list '%s': bad character '%c' in a host name",
					  x->expr, *p);
		if (blen >= GP_HOSTNAME_MAX)
			return gp_err_set(x->e, GP_E_USAGE, EINVAL, "host list '%s': a name longer than %d characters",
					  x->expr, GP_HOSTNAME_MAX);
		buf[blen++] = *p++;
	}
	if (p == end) {
		int rc;

		if (!blen)
			return gp_err_set(x->e, GP_E_USAGE, EINVAL, "host list '%s': an empty host name", x->expr);
		if (++x->added > GP_HOSTLIST_MAX)
			return gp_err_set(x->e, GP_E_USAGE, E2BIG, "host list '%s': more than %d hosts", x->expr,
					  GP_HOSTLIST_MAX);
		buf[blen] = '\0';
		rc = gp_hostlist_add(x->h, buf);
		return rc ? gp_err_set(x->e, GP_E_FAIL, ENOMEM, "out of memory") : 0;
	}
	close = memchr(p, ']', (size_t)(end - p));
	if (!close)
		return gp_err_set(x->e, GP_E_USAGE, EINVAL, "host list '%s': '[' without ']'", x->expr);
	if (close == p + 1)
		return gp_err_set(x->e, GP_E_USAGE, EINVAL, "host list '%s': empty brackets", x->expr);
	for (const char *q = p + 1; q < close;) {
		unsigned long long lo, hi;
		int wlo, whi, rc;

		if (bracket_num(x, &q, &lo, &wlo))
			return -EINVAL;
		hi = lo;
		if (*q == '-') {
			q++;
			if (bracket_num(x, &q, &hi, &whi))
				return -EINVAL;
			if (hi < lo)
				return gp_err_set(x->e, GP_E_USAGE, EINVAL, "host list '%s': range %llu-%llu runs backwards",
						  x->expr, lo, hi);
		}
		if (*q == ',' && q + 1 < close)
			q++;
		else if (q != close)
			return gp_err_set(x->e, GP_E_USAGE, EINVAL, "host list '%s': unexpected '%c' in brackets",
					  x->expr, *q);
		if (hi - lo >= GP_HOSTLIST_MAX)
			return gp_err_set(x->e, GP_E_USAGE, E2BIG, "host list '%s': more than %d hosts", x->expr,
					  GP_HOSTLIST_MAX);
		for (unsigned long long v = lo; v <= hi; v++) {
			int n = snprintf(buf + blen, GP_HOSTNAME_MAX + 1 - blen, "%0*llu", wlo, v);

			if (n < 0 || blen + (size_t)n > GP_HOSTNAME_MAX)
				return gp_err_set(x->e, GP_E_USAGE, EINVAL, "host list '%s': a name longer than %d characters",
						  x->expr, GP_HOSTNAME_MAX);
			rc = expand_item(x, buf, blen + (size_t)n, close + 1, (size_t)(end - close - 1));
			if (rc)
				return rc;
		}
	}
	return 0;
}

int gp_hostlist_parse(struct gp_hostlist *h, const char *expr, struct gp_err *e)
{
	struct expand x = { .h = h, .e = e, .expr = expr };
	char buf[GP_HOSTNAME_MAX + 1];
	const char *p = expr;

	if (!*p)
		return gp_err_set(e, GP_E_USAGE, EINVAL, "empty host list");
	for (;;) {
		const char *q = p;
		int depth = 0, rc;

		/* an item ends at a comma outside brackets */
		while (*q && (depth || *q != ',')) {
			if (*q == '[' && depth++)
				return gp_err_set(e, GP_E_USAGE, EINVAL, "host list '%s': nested '['", expr);
			if (*q == ']' && !depth--)
				return gp_err_set(e, GP_E_USAGE, EINVAL, "host list '%s': ']' without '['", expr);
			q++;
		}
		if (depth)
			return gp_err_set(e, GP_E_USAGE, EINVAL, "host list '%s': '[' without ']'", expr);
		rc = expand_item(&x, buf, 0, p, (size_t)(q - p));
		if (rc)
			return rc;
		if (!*q)
			return 0;
		p = q + 1;
	}
}

/* A name split at its last run of digits: prefix [0, ds), digits [ds, de), suffix [de, end). */
struct hsplit {
	const char *s;
	size_t ds, de, len;
	unsigned long long num;
	int hasnum;
};

static void split(const char *s, struct hsplit *h)
{
	size_t i;

	h->s = s;
	h->len = strlen(s);
	h->hasnum = 0;
	h->num = 0;
	h->ds = h->de = h->len;
	for (i = h->len; i > 0 && !(s[i - 1] >= '0' && s[i - 1] <= '9'); i--)
		;
	if (!i)
		return;
	h->de = i;
	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	h->ds = i;
	if (h->de - h->ds > NUM_DIGITS_MAX) {
		h->ds = h->de = h->len;
		return;
	}
	for (size_t k = h->ds; k < h->de; k++)
		h->num = h->num * 10 + (unsigned long long)(s[k] - '0');
	h->hasnum = 1;
}

static int cmp_part(const char *a, size_t na, const char *b, size_t nb)
{
	int c = memcmp(a, b, na < nb ? na : nb);

	return c ? c : (na > nb) - (na < nb);
}

/* Same prefix and suffix (the names may share a range): 0, else their order. */
static int cmp_frame(const struct hsplit *a, const struct hsplit *b)
{
	int c = cmp_part(a->s, a->ds, b->s, b->ds);

	if (!c)
		c = cmp_part(a->s + a->de, a->len - a->de, b->s + b->de, b->len - b->de);
	return c ? c : a->hasnum - b->hasnum;
}

int gp_hostlist_cmp(const char *a, const char *b)
{
	struct hsplit x, y;
	int c;

	split(a, &x);
	split(b, &y);
	c = cmp_frame(&x, &y);
	if (c)
		return c;
	if (x.num != y.num)
		return x.num < y.num ? -1 : 1;
	c = (int)(x.de - x.ds) - (int)(y.de - y.ds);
	return c ? c : strcmp(a, b);
}

static int cmp_ptr(const void *a, const void *b)
{
	return gp_hostlist_cmp(*(char *const *)a, *(char *const *)b);
}

void gp_hostlist_uniq(struct gp_hostlist *h)
{
	int k = 0;

	if (h->n > 1)
		qsort(h->v, (size_t)h->n, sizeof(*h->v), cmp_ptr);
	for (int i = 0; i < h->n; i++) {
		if (k && !strcmp(h->v[k - 1], h->v[i]))
			free(h->v[i]);
		else
			h->v[k++] = h->v[i];
	}
	h->n = k;
}

struct sbuf {
	char *s;
	size_t n, cap;
	int nomem;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->nomem)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *t = realloc(b->s, cap);

		if (!t) {
			b->nomem = 1;
			return;
		}
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static void sb_num(struct sbuf *b, unsigned long long v, int pad)
{
	char t[32];
	int n = snprintf(t, sizeof(t), "%0*llu", pad, v);

	sb_add(b, t, (size_t)n);
}

/* Write the names of one frame, h[0..n) (sorted, no repeats), as prefix[ranges]suffix. */
static void fold_frame(struct sbuf *b, const struct hsplit *h, int n)
{
	if (n == 1 || !h[0].hasnum) {
		for (int i = 0; i < n; i++) {
			if (i)
				sb_add(b, ",", 1);
			sb_add(b, h[i].s, h[i].len);
		}
		return;
	}
	sb_add(b, h[0].s, h[0].ds);
	sb_add(b, "[", 1);
	for (int i = 0; i < n;) {
		int w = (int)(h[i].de - h[i].ds);
		int pad = w > 1 && h[i].s[h[i].ds] == '0' ? w : 0, j = i;

		/* the range goes on while numbers follow and keep its width (padded) or have no padding */
		while (j + 1 < n && h[j + 1].num == h[j].num + 1) {
			int w1 = (int)(h[j + 1].de - h[j + 1].ds);
			int z1 = w1 > 1 && h[j + 1].s[h[j + 1].ds] == '0';

			if (pad ? w1 != pad : z1)
				break;
			j++;
		}
		if (i)
			sb_add(b, ",", 1);
		sb_num(b, h[i].num, pad);
		if (j > i) {
			sb_add(b, "-", 1);
			sb_num(b, h[j].num, pad);
		}
		i = j + 1;
	}
	sb_add(b, "]", 1);
	sb_add(b, h[0].s + h[0].de, h[0].len - h[0].de);
}

static int cmp_split(const void *a, const void *b)
{
	return gp_hostlist_cmp(((const struct hsplit *)a)->s, ((const struct hsplit *)b)->s);
}

char *gp_hostlist_format(char *const *names, int n)
{
	struct hsplit *h = calloc((size_t)(n > 0 ? n : 1), sizeof(*h));
	struct sbuf b = { 0 };
	int m = 0;

	if (!h)
		return NULL;
	for (int i = 0; i < n; i++)
		split(names[i], &h[i]);
	qsort(h, (size_t)n, sizeof(*h), cmp_split);
	for (int i = 0; i < n; i++) /* drop repeats */
		if (!m || strcmp(h[m - 1].s, h[i].s))
			h[m++] = h[i];
	sb_add(&b, "", 0);
	for (int i = 0; i < m;) {
		int j = i + 1;

		while (j < m && !cmp_frame(&h[i], &h[j]))
			j++;
		if (i)
			sb_add(&b, ",", 1);
		fold_frame(&b, h + i, j - i);
		i = j;
	}
	free(h);
	if (b.nomem) {
		free(b.s);
		return NULL;
	}
	return b.s;
}
