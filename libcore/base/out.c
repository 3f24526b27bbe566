/* gpup2p — output helpers: JSON, CSV, tables, colour. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpup2p/buf.h"
#include "gpup2p/out.h"

void gp_json_init(struct gp_json *j, FILE *f, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
}

/* Length of the well-formed UTF-8 sequence at p (1 to 4 bytes, RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 when the bytes there are not one. Stops at a NUL. */
static int utf8_len(const unsigned char *p)
{
	unsigned c = p[0], lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return p[1] >= lo && p[1] <= hi ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		if (c == 0xed)
			hi = 0x9f; /* surrogates U+D800..U+DFFF */
		return p[1] >= lo && p[1] <= hi && p[2] >= 0x80 && p[2] <= 0xbf ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
		return p[1] >= lo && p[1] <= hi && p[2] >= 0x80 && p[2] <= 0xbf && p[3] >= 0x80 && p[3] <= 0xbf ? 4 : 0;
	}
	return 0;
}

/* A JSON string: sysfs text is bytes, JSON is UTF-8. Well-formed UTF-8 passes through; control
 * characters and DEL are escaped; each byte that does not start a well-formed sequence becomes
 * U+FFFD, so the document stays valid whatever a driver, a label or the command line holds. */
static void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run = p; /* run: bytes passed through as they are */

	fputc('"', f);
	while (*p) {
		int n = utf8_len(p);
		const char *esc = *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\n' ? "\\n" : *p == '\t' ? "\\t" :
				  *p == '\r' ? "\\r" : NULL;

		if (!esc && n && *p >= 0x20 && *p != 0x7f) {
			p += n;
			continue;
		}
		fwrite(run, 1, (size_t)(p - run), f);
		if (esc)
			fputs(esc, f);
		else if (!n)
			fputs("\\ufffd", f);
		else
			fprintf(f, "\\u%04x", *p);
		p += n ? n : 1;
		run = p;
	}
	fwrite(run, 1, (size_t)(p - run), f);
	fputc('"', f);
}

/* A code point that moves or hides text on a terminal without being a control character: the
 * bidirectional embeddings, overrides and isolates and the direction marks ("Trojan Source"). */
static int bidi_control(unsigned cp)
{
	return cp == 0x200e || cp == 0x200f || cp == 0x061c || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

int gp_out_escape(struct gp_buf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n = utf8_len(p), rc;
		unsigned cp = 0;

		if (n == 2)
			cp = (p[0] & 0x1fu) << 6 | (p[1] & 0x3fu);
		else if (n == 3)
			cp = (p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu);
		if (!n || *p < 0x20 || *p == 0x7f)
			rc = *p == '\n' ? gp_buf_addf(b, "\\n") : *p == '\t' ? gp_buf_addf(b, "\\t") :
			     *p == '\r' ? gp_buf_addf(b, "\\r") : gp_buf_addf(b, "\\x%02x", *p);
		else if ((cp >= 0x80 && cp <= 0x9f) || bidi_control(cp))
			rc = gp_buf_addf(b, "\\u%04x", cp);
		else
			rc = gp_buf_addf(b, "%.*s", n, (const char *)p);
		if (rc)
			return rc;
		p += n ? n : 1;
	}
	return 0;
}

static void json_sep(struct gp_json *j, const char *key)
{
	int pretty = j->pretty && !(j->flat_from && j->depth >= j->flat_from);

	if (j->count[j->depth]++)
		fputc(',', j->f);
	if (pretty && j->depth > 0) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	} else if (!pretty && j->depth > 0 && j->count[j->depth] > 1) {
		fputc(' ', j->f);
	}
	if (key) {
		json_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void json_open(struct gp_json *j, const char *key, char c)
{
	json_sep(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < GP_JSON_DEPTH)
		j->depth++;
	j->count[j->depth] = 0;
}

void gp_json_obj(struct gp_json *j, const char *key)
{
	json_open(j, key, '{');
}

void gp_json_arr(struct gp_json *j, const char *key)
{
	json_open(j, key, '[');
}

void gp_json_arr_flat(struct gp_json *j, const char *key)
{
	json_open(j, key, '[');
	if (!j->flat_from)
		j->flat_from = j->depth;
}

void gp_json_end(struct gp_json *j, char close)
{
	int had = j->count[j->depth];
	int pretty = j->pretty && !(j->flat_from && j->depth >= j->flat_from);

	if (j->flat_from == j->depth)
		j->flat_from = 0;
	if (j->depth > 0)
		j->depth--;
	if (pretty && had) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(close, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void gp_json_str(struct gp_json *j, const char *key, const char *v)
{
	json_sep(j, key);
	if (v)
		json_string(j->f, v);
	else
		fputs("null", j->f);
}

void gp_json_int(struct gp_json *j, const char *key, long long v)
{
	json_sep(j, key);
	fprintf(j->f, "%lld", v);
}

void gp_json_u64(struct gp_json *j, const char *key, uint64_t v)
{
	json_sep(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void gp_json_num(struct gp_json *j, const char *key, double v, int prec)
{
	json_sep(j, key);
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.*f", prec, v);
}

void gp_json_bool(struct gp_json *j, const char *key, int v)
{
	json_sep(j, key);
	fputs(v ? "true" : "false", j->f);
}

void gp_json_null(struct gp_json *j, const char *key)
{
	json_sep(j, key);
	fputs("null", j->f);
}

void gp_csv_field(FILE *f, const char *s, char sep)
{
	if (!s)
		s = "";
	if (strpbrk(s, ",\"\n\r")) {
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	} else {
		fputs(s, f);
	}
	fputc(sep, f);
}

int gp_table_init(struct gp_table *t, int ncol)
{
	memset(t, 0, sizeof(*t));
	t->ncol = ncol;
	t->right = calloc((size_t)ncol, sizeof(*t->right));
	return t->right ? 0 : -ENOMEM;
}

int gp_table_row(struct gp_table *t, const char *const *cells)
{
	if (t->nrow + 1 > t->cap) {
		int cap = t->cap ? t->cap * 2 : 16;
		char **nc = realloc(t->cells, (size_t)cap * (size_t)t->ncol * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		t->cells = nc;
		t->cap = cap;
	}
	for (int c = 0; c < t->ncol; c++) {
		char *s = strdup(cells[c] ? cells[c] : "");

		if (!s) {
			for (int k = 0; k < c; k++)
				free(t->cells[t->nrow * t->ncol + k]);
			return -ENOMEM;
		}
		t->cells[t->nrow * t->ncol + c] = s;
	}
	t->nrow++;
	return 0;
}

void gp_table_print(const struct gp_table *t, FILE *f, int indent, int gap, const char *(*color)(const char *))
{
	int *w = calloc((size_t)t->ncol, sizeof(*w));

	if (!w)
		return;
	for (int r = 0; r < t->nrow; r++)
		for (int c = 0; c < t->ncol; c++) {
			int l = (int)strlen(t->cells[r * t->ncol + c]);

			if (l > w[c])
				w[c] = l;
		}
	for (int r = 0; r < t->nrow; r++) {
		int last = t->ncol - 1;

		while (last > 0 && !t->cells[r * t->ncol + last][0])
			last--;
		fprintf(f, "%*s", indent, "");
		for (int c = 0; c <= last; c++) {
			const char *s = t->cells[r * t->ncol + c];
			const char *sgr = color ? color(s) : NULL;
			int pad = w[c] - (int)strlen(s);

			if (t->right[c])
				fprintf(f, "%*s", pad, "");
			fprintf(f, "%s%s%s", sgr ? sgr : "", s, sgr ? "\033[0m" : "");
			if (c < last)
				fprintf(f, "%*s", (t->right[c] ? 0 : pad) + gap, "");
		}
		fputc('\n', f);
	}
	free(w);
}

void gp_table_free(struct gp_table *t)
{
	for (int i = 0; i < t->nrow * t->ncol; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->right);
	memset(t, 0, sizeof(*t));
}

int gp_out_parse_color(const char *s)
{
	return (s && (!strcmp(s, "auto") || !strcmp(s, "always") || !strcmp(s, "never"))) ? 0 : -EINVAL;
}

int gp_out_use_color(const char *mode, FILE *f)
{
	const char *nc = getenv("NO_COLOR");

	if (mode && !strcmp(mode, "always"))
		return 1;
	if (mode && !strcmp(mode, "never"))
		return 0;
	if (nc && *nc)
		return 0;
	return isatty(fileno(f));
}

/* A Prometheus HELP text or label value: backslash, newline (and in label values the double quote)
 * escaped, bytes that are not well-formed UTF-8 written as U+FFFD (the format is UTF-8). */
static void prom_escape(FILE *f, const char *s, int quote)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		int n = utf8_len(p);

		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '"' && quote)
			fputs("\\\"", f);
		else if (!n)
			fputs("\xef\xbf\xbd", f);
		else
			fwrite(p, 1, (size_t)n, f);
		p += n ? n : 1;
	}
}

void gp_prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s ", name);
	prom_escape(f, help, 0);
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

void gp_prom_sample(FILE *f, const char *name, const char *const *labels, int nlabels, double v)
{
	fputs(name, f);
	for (int i = 0; i < nlabels; i++) {
		fprintf(f, "%s%s=\"", i ? "," : "{", labels[2 * i]);
		prom_escape(f, labels[2 * i + 1] ? labels[2 * i + 1] : "", 1);
		fputc('"', f);
	}
	if (nlabels)
		fputc('}', f);
	if (isnan(v))
		fputs(" NaN\n", f);
	else if (isinf(v))
		fputs(v > 0 ? " +Inf\n" : " -Inf\n", f);
	else
		fprintf(f, " %.15g\n", v);
}

int gp_out_write_atomic(const char *path, const void *data, size_t len, int *created)
{
	const char *slash = strrchr(path, '/'), *p = data;
	char tmp[4096];
	int fd, err = 0, n;

	if (created)
		*created = 0;
	n = slash ? snprintf(tmp, sizeof(tmp), "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1)
		  : snprintf(tmp, sizeof(tmp), ".%s.XXXXXX", path);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp); /* a new name, O_EXCL: never writes through what stands there */
	if (fd < 0)
		return -errno;
	if (created)
		*created = 1;
	while (len && !err) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno != EINTR)
			err = errno;
		else if (w > 0)
			p += w, len -= (size_t)w;
	}
	if (!err && (fchmod(fd, 0644) || fsync(fd)))
		err = errno;
	if (close(fd) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err)
		unlink(tmp);
	return -err;
}

int gp_out_replace_file(const char *dir, const char *name, const void *data, size_t len, struct gp_err *e)
{
	char dst[4096];
	int err, created;

	if ((size_t)snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= sizeof(dst))
		return gp_err_set(e, GP_E_USAGE, ENAMETOOLONG, "%s: the path is too long", dir);
	err = -gp_out_write_atomic(dst, data, len, &created);
	if (!err)
		return 0;
	if (!created && err == ENAMETOOLONG)
		return gp_err_set(e, GP_E_USAGE, err, "%s: the path is too long", dir);
	if (!created)
		return gp_err_set(e, err == EACCES || err == EPERM || err == EROFS ? GP_E_PERM :
				  err == ENOENT || err == ENOTDIR ? GP_E_USAGE : GP_E_FAIL, err,
				  "cannot create a file in %s: %s", dir, strerror(err));
	return gp_err_set(e, err == EACCES || err == EPERM || err == EROFS ? GP_E_PERM : GP_E_FAIL, err,
			  "cannot write %s: %s", dst, strerror(err));
}
