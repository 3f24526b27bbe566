/* gpup2p — a small JSON reader (RFC 8259): recursive descent into a tree allocated in chunks. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/jsonr.h"

#define JR_DEPTH 64
#define JR_CHUNK 65536

struct jr {
	struct gp_jdoc *d;
	const char *s, *end, *p;
	char *why;
	size_t whylen;
	int nomem;
};

/* Chunks are chained through their first pointer; d->mem is the newest. */
static void *jr_alloc(struct jr *r, size_t n)
{
	struct gp_jdoc *d = r->d;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (!d->mem || d->used + n > d->cap) {
		size_t cap = n + 16 > JR_CHUNK ? n + 16 : JR_CHUNK;
		char *c = malloc(cap);

		if (!c) {
			r->nomem = 1;
			return NULL;
		}
		memcpy(c, &d->mem, sizeof(char *));
		d->mem = c;
		d->cap = cap;
		d->used = 16;
	}
	p = d->mem + d->used;
	d->used += n;
	return p;
}

static int jr_fail(struct jr *r, const char *what)
{
	if (r->p >= r->end)
		snprintf(r->why, r->whylen, "truncated (ends inside a value, at byte %zu)", (size_t)(r->end - r->s));
	else
		snprintf(r->why, r->whylen, "%s at byte %zu", what, (size_t)(r->p - r->s));
	return -1;
}

static void jr_ws(struct jr *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static int hex4(const char *p, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

static char *put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | (cp >> 6));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | (cp >> 12));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | (cp >> 18));
		*o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

/* A string at r->p (on the opening quote): unescaped, NUL-terminated, in the document's memory. */
static const char *jr_string(struct jr *r)
{
	const char *q = ++r->p;
	char *out, *o;

	while (q < r->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q >= r->end) {
		r->p = r->end;
		jr_fail(r, "");
		return NULL;
	}
	out = o = jr_alloc(r, (size_t)(q - r->p) + 1);
	if (!out)
		return NULL;
	while (r->p < q) {
		unsigned char c = (unsigned char)*r->p++;
		unsigned cp, lo;

		if (c < 0x20) {
			r->p--;
			jr_fail(r, "control character in a string");
			return NULL;
		}
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		switch (*r->p++) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (q - r->p < 4 || hex4(r->p, &cp)) {
				jr_fail(r, "bad \\u escape");
				return NULL;
			}
			if (!cp) {
				r->p -= 2;
				jr_fail(r, "a NUL (\\u0000) in a string");
				return NULL;
			}
			r->p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && q - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u' &&
			    !hex4(r->p + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				r->p += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd; /* a lone surrogate */
			}
			o = put_utf8(o, cp);
			break;
		default:
			r->p--;
			jr_fail(r, "bad escape");
			return NULL;
		}
	}
	*o = '\0';
	r->p = q + 1;
	return out;
}

static int jr_number(struct jr *r, struct gp_jv *v)
{
	const char *p = r->p;
	char buf[64], *e;
	size_t n;

	if (p < r->end && *p == '-')
		p++;
	if (p >= r->end || *p < '0' || *p > '9')
		return jr_fail(r, "unexpected character");
	if (*p == '0' && p + 1 < r->end && p[1] >= '0' && p[1] <= '9')
		return jr_fail(r, "leading zero in a number");
	while (p < r->end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-'))
		p++;
	n = (size_t)(p - r->p);
	if (n >= sizeof(buf))
		return jr_fail(r, "number too long");
	memcpy(buf, r->p, n);
	buf[n] = '\0';
	v->n = strtod(buf, &e);
	if (*e)
		return jr_fail(r, "bad number");
	v->type = GP_JV_NUM;
	r->p = p;
	return 0;
}

static int jr_value(struct jr *r, struct gp_jv *v, int depth);

/* An array or object at r->p (on '[' or '{'). */
static int jr_container(struct jr *r, struct gp_jv *v, int depth)
{
	int obj = *r->p == '{';
	char close = obj ? '}' : ']';
	struct gp_jv **tail = &v->kid;

	if (depth >= JR_DEPTH)
		return jr_fail(r, "nested too deep");
	v->type = obj ? GP_JV_OBJ : GP_JV_ARR;
	r->p++;
	jr_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return 0;
	}
	for (;;) {
		struct gp_jv *k = jr_alloc(r, sizeof(*k));
		const char *key = NULL;

		if (!k)
			return -1;
		memset(k, 0, sizeof(*k));
		jr_ws(r);
		if (obj) {
			if (r->p >= r->end || *r->p != '"')
				return jr_fail(r, "expected a member name");
			if (!(key = jr_string(r)))
				return -1;
			jr_ws(r);
			if (r->p >= r->end || *r->p != ':')
				return jr_fail(r, "expected ':'");
			r->p++;
		}
		if (jr_value(r, k, depth + 1))
			return -1;
		k->key = key;
		*tail = k;
		tail = &k->next;
		v->nkid++;
		jr_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			return 0;
		}
		return jr_fail(r, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int lit(struct jr *r, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n))
		return 0;
	r->p += n;
	return 1;
}

static int jr_value(struct jr *r, struct gp_jv *v, int depth)
{
	jr_ws(r);
	if (r->p >= r->end)
		return jr_fail(r, "");
	switch (*r->p) {
	case '{':
	case '[':
		return jr_container(r, v, depth);
	case '"':
		v->type = GP_JV_STR;
		return (v->s = jr_string(r)) ? 0 : -1;
	case 't':
	case 'f':
		v->type = GP_JV_BOOL;
		v->n = *r->p == 't';
		return lit(r, v->n ? "true" : "false") ? 0 : jr_fail(r, "unexpected word");
	case 'n':
		v->type = GP_JV_NULL;
		return lit(r, "null") ? 0 : jr_fail(r, "unexpected word");
	default:
		return jr_number(r, v);
	}
}

int gp_jdoc_parse(struct gp_jdoc *d, const char *s, size_t len, char *why, size_t whylen)
{
	struct jr r = { .d = d, .s = s, .end = s + len, .p = s, .why = why, .whylen = whylen };
	struct gp_jv *root;

	memset(d, 0, sizeof(*d));
	if (whylen)
		why[0] = '\0';
	root = jr_alloc(&r, sizeof(*root));
	if (root) {
		memset(root, 0, sizeof(*root));
		if (!jr_value(&r, root, 0)) {
			jr_ws(&r);
			if (r.p == r.end) {
				d->root = root;
				return 0;
			}
			jr_fail(&r, "text after the value");
		}
	}
	gp_jdoc_free(d);
	if (r.nomem) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	return -EINVAL;
}

void gp_jdoc_free(struct gp_jdoc *d)
{
	char *c = d->mem, *prev;

	while (c) {
		memcpy(&prev, c, sizeof(char *));
		free(c);
		c = prev;
	}
	memset(d, 0, sizeof(*d));
}

const struct gp_jv *gp_jv_get(const struct gp_jv *o, const char *key)
{
	if (!o || o->type != GP_JV_OBJ)
		return NULL;
	for (const struct gp_jv *k = o->kid; k; k = k->next)
		if (!strcmp(k->key, key))
			return k;
	return NULL;
}

const char *gp_jv_str(const struct gp_jv *o, const char *key)
{
	const struct gp_jv *v = gp_jv_get(o, key);

	return v && v->type == GP_JV_STR ? v->s : NULL;
}

int gp_jv_num(const struct gp_jv *o, const char *key, double *out)
{
	const struct gp_jv *v = gp_jv_get(o, key);

	if (!v || v->type != GP_JV_NUM)
		return 0;
	*out = v->n;
	return 1;
}
