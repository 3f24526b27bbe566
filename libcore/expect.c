/* gpup2p — the expected baseline's format: strict parsing, writing, and the one comparison rule. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/expect.h"

static const char *const kind_names[GP_EXPECT_KINDS] = { "gpu", "nic" };
static const char *const field_names[GP_XF_N] = { "model", "link", "nvlinks", "numa", "rate" };

#define EXPECT_COUNT_MAX 4096
#define EXPECT_LINE_MAX 1024

void gp_expect_dev_init(struct gp_expect_dev *d, int kind)
{
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->gen = d->width = d->nvlinks = d->numa = -1;
	d->rate = -1;
}

void gp_expect_init(struct gp_expect *x)
{
	memset(x, 0, sizeof(*x));
	for (int k = 0; k < GP_EXPECT_KINDS; k++) {
		x->count[k] = -1;
		gp_expect_dev_init(&x->all[k], k);
	}
}

void gp_expect_free(struct gp_expect *x)
{
	free(x->dev);
	gp_expect_init(x);
}

const char *gp_expect_kind_name(int kind)
{
	return kind >= 0 && kind < GP_EXPECT_KINDS ? kind_names[kind] : "?";
}

const char *gp_expect_field_name(enum gp_expect_field f)
{
	return (unsigned)f < GP_XF_N ? field_names[f] : "?";
}

int gp_expect_field_of(int kind, enum gp_expect_field f)
{
	if (f == GP_XF_MODEL || f == GP_XF_NVLINKS)
		return kind == GP_EXPECT_GPU;
	if (f == GP_XF_RATE)
		return kind == GP_EXPECT_NIC;
	return (unsigned)f < GP_XF_N;
}

struct gp_expect_dev *gp_expect_add(struct gp_expect *x, int kind, const char *bdf)
{
	if (x->ndev == x->cap) {
		int cap = x->cap ? 2 * x->cap : 16;
		struct gp_expect_dev *v = realloc(x->dev, (size_t)cap * sizeof(*v));

		if (!v)
			return NULL;
		x->dev = v;
		x->cap = cap;
	}
	gp_expect_dev_init(&x->dev[x->ndev], kind);
	snprintf(x->dev[x->ndev].bdf, sizeof(x->dev[0].bdf), "%s", bdf);
	return &x->dev[x->ndev++];
}

const struct gp_expect_dev *gp_expect_find(const struct gp_expect *x, int kind, const char *bdf)
{
	for (int i = 0; i < x->ndev; i++)
		if (x->dev[i].kind == kind && !strcmp(x->dev[i].bdf, bdf))
			return &x->dev[i];
	return NULL;
}

int gp_expect_known(const struct gp_expect_dev *d, enum gp_expect_field f)
{
	switch (f) {
	case GP_XF_MODEL: return d->model[0] != '\0';
	case GP_XF_LINK: return d->gen > 0 || d->width > 0;
	case GP_XF_NVLINKS: return d->nvlinks >= 0;
	case GP_XF_NUMA: return d->numa >= 0;
	case GP_XF_RATE: return d->rate > 0;
	default: return 0;
	}
}

const struct gp_expect_dev *gp_expect_want(const struct gp_expect *x, int kind, const char *bdf,
					   enum gp_expect_field f)
{
	const struct gp_expect_dev *d = gp_expect_find(x, kind, bdf);

	if (d && gp_expect_known(d, f))
		return d;
	return gp_expect_known(&x->all[kind], f) ? &x->all[kind] : NULL;
}

const char *gp_expect_value(const struct gp_expect_dev *d, enum gp_expect_field f, char *buf, size_t n)
{
	buf[0] = '\0';
	if (!gp_expect_known(d, f))
		return buf;
	switch (f) {
	case GP_XF_MODEL:
		snprintf(buf, n, "%s", d->model);
		break;
	case GP_XF_LINK:
		if (d->gen > 0 && d->width > 0)
			snprintf(buf, n, "gen%d x%d", d->gen, d->width);
		else if (d->gen > 0)
			snprintf(buf, n, "gen%d", d->gen);
		else
			snprintf(buf, n, "x%d", d->width);
		break;
	case GP_XF_NVLINKS:
		snprintf(buf, n, "%d", d->nvlinks);
		break;
	case GP_XF_NUMA:
		snprintf(buf, n, "%d", d->numa);
		break;
	case GP_XF_RATE:
		snprintf(buf, n, "%g Gb/s", d->rate);
		break;
	default:
		break;
	}
	return buf;
}

static enum gp_expect_verdict cmp_num(double have, double want)
{
	return have < want ? GP_XV_BELOW : have > want ? GP_XV_ABOVE : GP_XV_MATCH;
}

enum gp_expect_verdict gp_expect_judge(const struct gp_expect_dev *have, const struct gp_expect_dev *want,
				       enum gp_expect_field f)
{
	enum gp_expect_verdict v;

	if (!want || !gp_expect_known(want, f))
		return GP_XV_MATCH;
	switch (f) {
	case GP_XF_MODEL:
		if (!have->model[0])
			return GP_XV_UNKNOWN;
		return strcmp(have->model, want->model) ? GP_XV_BELOW : GP_XV_MATCH;
	case GP_XF_LINK:
		/* the parts the expectation states; the worse of the two decides */
		if ((want->gen > 0 && have->gen <= 0) || (want->width > 0 && have->width <= 0))
			return GP_XV_UNKNOWN;
		v = want->gen > 0 ? cmp_num(have->gen, want->gen) : GP_XV_MATCH;
		if (want->width > 0 && v != GP_XV_BELOW) {
			enum gp_expect_verdict w = cmp_num(have->width, want->width);

			v = w != GP_XV_MATCH ? w : v;
		}
		return v;
	case GP_XF_NVLINKS:
		return have->nvlinks < 0 ? GP_XV_UNKNOWN : cmp_num(have->nvlinks, want->nvlinks);
	case GP_XF_NUMA:
		if (have->numa < 0)
			return GP_XV_UNKNOWN;
		return have->numa != want->numa ? GP_XV_BELOW : GP_XV_MATCH;
	case GP_XF_RATE:
		/* rates as sysfs prints them ("53.125 Gb/sec"): equal within a thousandth */
		if (have->rate <= 0)
			return GP_XV_UNKNOWN;
		if (fabs(have->rate - want->rate) <= want->rate * 1e-3)
			return GP_XV_MATCH;
		return cmp_num(have->rate, want->rate);
	default:
		return GP_XV_MATCH;
	}
}

/* --- parsing ------------------------------------------------------------------------------------ */

struct pctx {
	struct gp_expect *x;
	const char *name;
	int line;
	struct gp_err *e;
};

__attribute__((format(printf, 2, 3))) static int bad(struct pctx *p, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return gp_err_set(p->e, GP_E_USAGE, EINVAL, "%s:%d: %s", p->name, p->line, why);
}

/* A whole number in [lo, hi], nothing else; 0 or -1. */
static int whole(const char *s, long lo, long hi, int *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

/* "0000:18:00.0" (lower or upper case hex, the domain 4 to 8 digits) into out, as sysfs names it. */
static int parse_bdf(const char *s, char *out, size_t n)
{
	unsigned dom, bus, dev, fn;
	int used = 0;

	if (strlen(s) < 12 || s[strspn(s, "0123456789abcdefABCDEF:.")] || sscanf(s, "%8x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &used) != 4 || s[used] ||
	    dev > 0x1f || fn > 7 || strcspn(s, ":") < 4)
		return -1;
	snprintf(out, n, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

/* "gen5 x16", "gen5", "x16" (case aside): a generation 1-6, a width the specification allows. */
static int parse_link(const char *s, struct gp_expect_dev *d)
{
	char a[32], b[32], extra[2];
	int n = sscanf(s, "%31s %31s %1s", a, b, extra), gen = -1, width = -1, v;

	if (n < 1 || n > 2)
		return -1;
	for (int i = 0; i < n; i++) {
		const char *t = i ? b : a;

		if (!strncasecmp(t, "gen", 3) && gen < 0 && !whole(t + 3, 1, 6, &v))
			gen = v;
		else if ((t[0] == 'x' || t[0] == 'X') && width < 0 && !whole(t + 1, 1, 32, &v) &&
			 ((v & (v - 1)) == 0 || v == 12))
			width = v;
		else
			return -1;
	}
	d->gen = gen;
	d->width = width;
	return 0;
}

/* "400", "400 Gb/s", "400Gb/s", "53.125 Gb/sec", "400G" */
static int parse_rate(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v <= 0 || v > 1e6 || !isdigit((unsigned char)*s))
		return -1;
	end += strspn(end, " ");
	if (*end && strcasecmp(end, "Gb/s") && strcasecmp(end, "Gb/sec") && strcasecmp(end, "G") &&
	    strcasecmp(end, "Gbps"))
		return -1;
	*out = v;
	return 0;
}

/* Split "kind.field[BDF]" into its parts; 0 or -1 (message set). */
static int parse_key(struct pctx *p, char *key, int *kind, int *field, char *bdf)
{
	char *dot = strchr(key, '.'), *br = strchr(key, '[');

	bdf[0] = '\0';
	if (!dot)
		return bad(p, "'%s' is no key (gpu.count, nic.rate, gpu.link[0000:18:00.0], ...)", key);
	*dot = '\0';
	for (*kind = 0; *kind < GP_EXPECT_KINDS && strcmp(key, kind_names[*kind]); (*kind)++)
		;
	if (*kind == GP_EXPECT_KINDS)
		return bad(p, "'%s.%s': no such key (keys begin with gpu. or nic.)", key, dot + 1);
	if (br) {
		size_t l = strlen(br);

		if (l < 3 || br[l - 1] != ']')
			return bad(p, "'%s.%s': a device is named as [0000:18:00.0]", key, dot + 1);
		br[l - 1] = '\0';
		*br++ = '\0';
		if (parse_bdf(br, bdf, GP_EXPECT_BDF_LEN))
			return bad(p, "'%s' is no PCI address (domain:bus:device.function, 0000:18:00.0)", br);
	}
	if (!strcmp(dot + 1, "count")) {
		if (bdf[0])
			return bad(p, "%s.count is said of every %s, not of one", key, key);
		*field = -1;
		return 0;
	}
	for (*field = 0; *field < GP_XF_N && strcmp(dot + 1, field_names[*field]); (*field)++)
		;
	if (*field == GP_XF_N)
		return bad(p, "'%s.%s': no such key (%s.count, .model, .link, .nvlinks, .numa, .rate)", key, dot + 1, key);
	if (!gp_expect_field_of(*kind, *field))
		return bad(p, "'%s.%s': %ss have no %s (%s)", key, dot + 1, key, dot + 1,
			   *field == GP_XF_RATE ? "nic.rate is a NIC's port rate" : "a GPU's key");
	return 0;
}

static int parse_value(struct pctx *p, struct gp_expect_dev *d, int field, const char *key, const char *v)
{
	struct gp_expect_dev t = *d;
	int rc = 0;

	switch (field) {
	case GP_XF_MODEL:
		if (strlen(v) >= sizeof(t.model))
			return bad(p, "%s: a model name longer than %zu bytes", key, sizeof(t.model) - 1);
		snprintf(t.model, sizeof(t.model), "%s", v);
		break;
	case GP_XF_LINK:
		rc = parse_link(v, &t);
		if (rc)
			return bad(p, "%s: '%s' is no link (gen1-gen6 and/or x1-x32: gen5 x16)", key, v);
		break;
	case GP_XF_NVLINKS:
		if (whole(v, 0, 64, &t.nvlinks))
			return bad(p, "%s: '%s' is no NVLink count (0 to 64)", key, v);
		break;
	case GP_XF_NUMA:
		if (whole(v, 0, 1023, &t.numa))
			return bad(p, "%s: '%s' is no NUMA node (0 to 1023)", key, v);
		break;
	case GP_XF_RATE:
		if (parse_rate(v, &t.rate))
			return bad(p, "%s: '%s' is no port rate (Gb/s: 400, 400 Gb/s)", key, v);
		break;
	}
	t.line[field] = p->line;
	*d = t;
	return 0;
}

static int parse_line(struct pctx *p, char *s)
{
	char *eq, *key, *v, bdf[GP_EXPECT_BDF_LEN], full[160];
	struct gp_expect_dev *d;
	int kind = 0, field = 0, n;
	size_t l;

	s[strcspn(s, "#")] = '\0'; /* no key or value holds '#' */
	s += strspn(s, " \t");
	for (l = strlen(s); l && isspace((unsigned char)s[l - 1]); l--)
		s[l - 1] = '\0';
	if (!*s)
		return 0;
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\t')
			return bad(p, "a control character in the line");
	if (!(eq = strchr(s, '=')))
		return bad(p, "no '=': a line is KEY = VALUE (gpu.count = 8)");
	*eq = '\0';
	key = s;
	for (l = strlen(key); l && isspace((unsigned char)key[l - 1]); l--)
		key[l - 1] = '\0';
	v = eq + 1 + strspn(eq + 1, " \t");
	if (!*key)
		return bad(p, "no key before '='");
	if (strpbrk(key, " \t"))
		return bad(p, "'%s': a key has no spaces (gpu.link[0000:18:00.0])", key);
	snprintf(full, sizeof(full), "%s", key);
	if (parse_key(p, key, &kind, &field, bdf))
		return -EINVAL;
	if (!*v)
		return bad(p, "%s has no value", full);
	if (field < 0) {
		if (p->x->count_line[kind])
			return bad(p, "%s stated twice (first on line %d)", full, p->x->count_line[kind]);
		if (whole(v, 0, EXPECT_COUNT_MAX, &n))
			return bad(p, "%s: '%s' is no count (0 to %d)", full, v, EXPECT_COUNT_MAX);
		p->x->count[kind] = n;
		p->x->count_line[kind] = p->line;
		return 0;
	}
	d = bdf[0] ? (struct gp_expect_dev *)gp_expect_find(p->x, kind, bdf) : &p->x->all[kind];
	if (!d && !(d = gp_expect_add(p->x, kind, bdf)))
		return gp_err_set(p->e, GP_E_FAIL, ENOMEM, "out of memory");
	if (d->line[field])
		return bad(p, "%s stated twice (first on line %d)", full, d->line[field]);
	return parse_value(p, d, field, full, v);
}

int gp_expect_parse(struct gp_expect *x, FILE *in, const char *name, struct gp_err *e)
{
	struct pctx p = { .x = x, .name = name, .e = e };
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	gp_expect_free(x);
	snprintf(x->file, sizeof(x->file), "%s", name);
	while (!rc && (n = getline(&line, &cap, in)) >= 0) {
		p.line++;
		if (memchr(line, '\0', (size_t)n))
			rc = bad(&p, "a NUL byte in the line");
		else if (n > EXPECT_LINE_MAX)
			rc = bad(&p, "a line longer than %d bytes", EXPECT_LINE_MAX);
		else
			rc = parse_line(&p, line);
	}
	free(line);
	if (!rc && ferror(in))
		rc = gp_err_set(e, GP_E_USAGE, EIO, "%s: read error", name);
	if (!rc && !p.line)
		rc = gp_err_set(e, GP_E_USAGE, EINVAL, "%s:1: empty: it states nothing to expect (gpu.count = 8, ...)",
				name);
	if (rc)
		gp_expect_free(x);
	return rc;
}

/* --- writing ------------------------------------------------------------------------------------ */

static void write_dev(const struct gp_expect_dev *d, FILE *out)
{
	char v[160];

	for (int f = 0; f < GP_XF_N; f++) {
		if (!gp_expect_field_of(d->kind, f) || !gp_expect_known(d, f))
			continue;
		fprintf(out, "%s.%s", kind_names[d->kind], field_names[f]);
		if (d->bdf[0])
			fprintf(out, "[%s]", d->bdf);
		fprintf(out, " = %s\n", gp_expect_value(d, f, v, sizeof(v)));
	}
}

void gp_expect_write(const struct gp_expect *x, FILE *out)
{
	for (int k = 0; k < GP_EXPECT_KINDS; k++) {
		if (x->count[k] >= 0)
			fprintf(out, "%s.count = %d\n", kind_names[k], x->count[k]);
		write_dev(&x->all[k], out);
	}
	for (int i = 0; i < x->ndev; i++)
		write_dev(&x->dev[i], out);
}
