/* gpup2p — one field list per record: the table, CSV and JSON of a record from one declaration. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/buf.h"
#include "gpup2p/out.h"

static void field_get(const struct gp_field *f, const void *rec, struct gp_value *v, struct gp_buf *buf)
{
	memset(v, 0, sizeof(*v));
	v->buf = buf;
	if (buf)
		gp_buf_reset(buf);
	f->get(rec, v);
}

const char *gp_field_text(const struct gp_field *f, const void *rec, struct gp_value *v)
{
	field_get(f, rec, v, v->buf);
	if (v->omit)
		return "";
	if (v->s)
		return v->s;
	if (v->null)
		return "";
	switch (f->type) {
	case GP_FIELD_INT: snprintf(v->num, sizeof(v->num), "%lld", v->i); break;
	case GP_FIELD_U64: snprintf(v->num, sizeof(v->num), "%" PRIu64, v->u); break;
	case GP_FIELD_BOOL: return v->i ? "true" : "false";
	case GP_FIELD_HEX: snprintf(v->num, sizeof(v->num), "0x%04llx", v->i); break;
	case GP_FIELD_NUM: snprintf(v->num, sizeof(v->num), "%.*f", v->prec, v->d); break;
	default: return "";
	}
	return v->num;
}

/* A GP_FIELD_WORDS value: a flat array of its space-separated words. */
static void json_words(struct gp_json *j, const char *key, const char *s)
{
	gp_json_arr_flat(j, key);
	while (s && *s) {
		size_t l = strcspn(s, " ");
		char w[256];

		if (l) {
			size_t k = l < sizeof(w) ? l : sizeof(w) - 1; /* a word longer than w: cut */

			memcpy(w, s, k);
			w[k] = '\0';
			gp_json_str(j, NULL, w);
		}
		s += l + (s[l] == ' ');
	}
	gp_json_end(j, ']');
}

void gp_fields_json(struct gp_json *j, const struct gp_field *f, int n, const void *rec, int host,
		    struct gp_buf *buf)
{
	struct gp_value v;

	for (int k = 0; k < n; k++) {
		if (!f[k].key || ((f[k].flags & GP_FIELD_HOST) && !host))
			continue;
		if (f[k].type == GP_FIELD_JSON) {
			f[k].json(rec, j, f[k].key);
			continue;
		}
		field_get(&f[k], rec, &v, buf);
		if (v.omit)
			continue;
		if (v.null) {
			gp_json_null(j, f[k].key);
			continue;
		}
		switch (f[k].type) {
		case GP_FIELD_STR: gp_json_str(j, f[k].key, v.s); break;
		case GP_FIELD_INT:
		case GP_FIELD_HEX: gp_json_int(j, f[k].key, v.i); break;
		case GP_FIELD_U64: gp_json_u64(j, f[k].key, v.u); break;
		case GP_FIELD_NUM: gp_json_num(j, f[k].key, v.d, v.prec); break;
		case GP_FIELD_BOOL: gp_json_bool(j, f[k].key, (int)v.i); break;
		case GP_FIELD_WORDS: json_words(j, f[k].key, v.s); break;
		case GP_FIELD_JSON: break;
		}
	}
}

/* The field in CSV column col, or NULL. */
static const struct gp_field *csv_col(const struct gp_field *f, int n, int col)
{
	for (int k = 0; k < n; k++)
		if (f[k].csv && f[k].col == col)
			return &f[k];
	return NULL;
}

static int csv_ncol(const struct gp_field *f, int n)
{
	int m = 0;

	for (int k = 0; k < n; k++)
		if (f[k].csv && f[k].col > m)
			m = f[k].col;
	return m;
}

void gp_fields_csv_header(FILE *out, const struct gp_field *f, int n)
{
	int m = csv_ncol(f, n);

	for (int c = 1; c <= m; c++) {
		const struct gp_field *x = csv_col(f, n, c);

		gp_csv_field(out, x ? x->csv : "", c < m ? ',' : '\n');
	}
}

void gp_fields_csv_row(FILE *out, const struct gp_field *f, int n, const void *rec, struct gp_buf *buf)
{
	int m = csv_ncol(f, n);
	struct gp_value v;

	for (int c = 1; c <= m; c++) {
		const struct gp_field *x = csv_col(f, n, c);

		v.buf = buf;
		gp_csv_field(out, x ? gp_field_text(x, rec, &v) : "", c < m ? ',' : '\n');
	}
}

int gp_field_in_view(const struct gp_field *f, unsigned view)
{
	return f->header && (!(f->flags & GP_FIELD_VIEWS) || (f->flags & view & GP_FIELD_VIEWS));
}

#define GP_TABLE_MAXCOL 64

int gp_fields_view(const struct gp_field *f, int n, unsigned view, int *col, int max)
{
	int nc = 0;

	for (int k = 0; k < n && nc < max; k++) {
		int at = nc;

		if (!gp_field_in_view(&f[k], view))
			continue;
		while (at > 0 && f[col[at - 1]].pos > f[k].pos) {
			col[at] = col[at - 1];
			at--;
		}
		col[at] = k;
		nc++;
	}
	return nc;
}

static int right_aligned(const struct gp_field *f)
{
	if (f->flags & (GP_FIELD_LEFT | GP_FIELD_RIGHT))
		return !!(f->flags & GP_FIELD_RIGHT);
	return f->type == GP_FIELD_INT || f->type == GP_FIELD_U64 || f->type == GP_FIELD_NUM;
}

int gp_fields_table_init(struct gp_table *t, const struct gp_field *f, int n, unsigned view)
{
	const char *row[GP_TABLE_MAXCOL];
	int col[GP_TABLE_MAXCOL], nc = gp_fields_view(f, n, view, col, GP_TABLE_MAXCOL);

	if (gp_table_init(t, nc))
		return -ENOMEM;
	for (int c = 0; c < nc; c++) {
		row[c] = f[col[c]].header;
		t->right[c] = right_aligned(&f[col[c]]);
	}
	return gp_table_row(t, row);
}

const char *gp_field_table_text(const struct gp_field *f, const void *rec, struct gp_value *v)
{
	const char *s;

	if (!f->text) {
		s = gp_field_text(f, rec, v);
		return !s[0] && v->null && !v->s ? "-" : s; /* unknown: "-" */
	}
	field_get(&(struct gp_field){ .get = f->text }, rec, v, v->buf);
	return v->s ? v->s : "";
}

int gp_fields_table_row(struct gp_table *t, const struct gp_field *f, int n, unsigned view, const void *rec,
			struct gp_buf *buf)
{
	char *row[GP_TABLE_MAXCOL] = { 0 };
	int col[GP_TABLE_MAXCOL], nc = gp_fields_view(f, n, view, col, GP_TABLE_MAXCOL), rc;
	struct gp_value v;

	if (nc != t->ncol)
		return -EINVAL;
	for (int c = 0; c < nc; c++) {
		v.buf = buf;
		row[c] = strdup(gp_field_table_text(&f[col[c]], rec, &v));
		if (!row[c]) {
			while (c--)
				free(row[c]);
			return -ENOMEM;
		}
	}
	rc = gp_table_row(t, (const char *const *)row);
	while (nc--)
		free(row[nc]);
	return rc;
}
