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
	if (v->s)
		return v->s;
	if (v->null || v->omit)
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
			snprintf(w, sizeof(w), "%.*s", (int)(l < sizeof(w) ? l : sizeof(w) - 1), s);
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

int gp_fields_table_init(struct gp_table *t, const struct gp_field *f, int n)
{
	const char *row[64];
	int nc = 0;

	for (int k = 0; k < n && nc < 64; k++)
		if (f[k].header) {
			row[nc] = f[k].header;
			nc++;
		}
	if (gp_table_init(t, nc))
		return -ENOMEM;
	for (int k = 0, c = 0; k < n && c < nc; k++)
		if (f[k].header)
			t->right[c++] = f[k].type == GP_FIELD_INT || f[k].type == GP_FIELD_U64 ||
					  f[k].type == GP_FIELD_NUM;
	return gp_table_row(t, row);
}

int gp_fields_table_row(struct gp_table *t, const struct gp_field *f, int n, const void *rec, struct gp_buf *buf)
{
	char *row[64];
	const char *crow[64] = { 0 };
	int nc = 0, rc;
	struct gp_value v;

	for (int k = 0; k < n && nc < 64 && nc < t->ncol; k++) {
		if (!f[k].header)
			continue;
		v.buf = buf;
		row[nc] = strdup(gp_field_text(&f[k], rec, &v));
		if (row[nc] && !row[nc][0] && v.null && !v.s) { /* unknown: "-" */
			free(row[nc]);
			row[nc] = strdup("-");
		}
		if (!row[nc]) {
			while (nc--)
				free(row[nc]);
			return -ENOMEM;
		}
		crow[nc] = row[nc];
		nc++;
	}
	rc = gp_table_row(t, crow);
	while (nc--)
		free(row[nc]);
	return rc;
}
