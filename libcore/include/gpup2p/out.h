/* gpup2p — output: a JSON writer, CSV fields, aligned text tables and colour.
 * Everything gpup2p prints in a machine format goes through here, so quoting and
 * number formatting are the same in every command. */
#ifndef GPUP2P_OUT_H
#define GPUP2P_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "gpup2p/buf.h"
#include "gpup2p/err.h"

enum gp_out_format { GP_OUT_TABLE = 0, GP_OUT_JSON, GP_OUT_CSV, GP_OUT_JSONL };

#define GP_JSON_DEPTH 16

struct gp_json {
	FILE *f;
	int pretty;                    /* indent with two spaces and newlines */
	int depth;
	int count[GP_JSON_DEPTH];      /* members written at each depth */
	int flat_from;                 /* depth from which output stays on one line, 0 none */
};

/* Start writing JSON to f; pretty = 0 writes one line (JSON lines). */
void gp_json_init(struct gp_json *j, FILE *f, int pretty);
/* Open an object (key NULL inside arrays or at top level). */
void gp_json_obj(struct gp_json *j, const char *key);
/* Open an array. */
void gp_json_arr(struct gp_json *j, const char *key);
/* Open an array whose elements stay on one line even when pretty. */
void gp_json_arr_flat(struct gp_json *j, const char *key);
/* Close the innermost object or array; at depth 0 a newline ends the document. */
void gp_json_end(struct gp_json *j, char close);
/* A string member or element; NULL writes null. */
void gp_json_str(struct gp_json *j, const char *key, const char *v);
/* An integer member or element. */
void gp_json_int(struct gp_json *j, const char *key, long long v);
/* An unsigned 64-bit member or element. */
void gp_json_u64(struct gp_json *j, const char *key, uint64_t v);
/* A number with up to `prec` decimals. */
void gp_json_num(struct gp_json *j, const char *key, double v, int prec);
/* A boolean member or element. */
void gp_json_bool(struct gp_json *j, const char *key, int v);
/* null. */
void gp_json_null(struct gp_json *j, const char *key);

/* Append s to b made safe to print on a terminal (text other machines sent): control characters and
 * DEL as \n \t \r or \xHH, C1 controls and bidirectional overrides as \uHHHH, each byte that is not
 * well-formed UTF-8 as \xHH; the rest unchanged. 0, or -ENOMEM. */
int gp_out_escape(struct gp_buf *b, const char *s);

/* Write s as a CSV field (quoted when it holds a comma, quote or newline), then sep (',' or '\n'). */
void gp_csv_field(FILE *f, const char *s, char sep);

/* A text table: cells added row by row, printed with columns aligned. */
struct gp_table {
	int ncol, nrow, cap;
	char **cells;                  /* nrow*ncol strdup'ed strings */
	int *right;                    /* per column: 1 right-aligned */
};

/* Start a table of ncol columns. 0 or -ENOMEM. */
int gp_table_init(struct gp_table *t, int ncol);
/* Append a row of ncol strings (NULL prints empty). 0 or -ENOMEM. */
int gp_table_row(struct gp_table *t, const char *const *cells);
/* Print with `gap` spaces between columns and `indent` before each row; colour is applied by
 * the callback color(cell) returning an ANSI SGR string or NULL (may be NULL). */
void gp_table_print(const struct gp_table *t, FILE *f, int indent, int gap, const char *(*color)(const char *));
/* Free the table's cells. */
void gp_table_free(struct gp_table *t);

/* One field list per record (util-linux's column info, systemd's format-table): each field of a record
 * declared once, with its JSON key, its CSV column and how its value is read, so that the table, CSV,
 * JSON and JSON lines of a record print the same fields and cannot drift apart. */
enum gp_field_type {
	GP_FIELD_STR,                  /* a string */
	GP_FIELD_INT,                  /* a signed integer (v.i) */
	GP_FIELD_U64,                  /* an unsigned 64-bit integer (v.u) */
	GP_FIELD_BOOL,                 /* true or false (v.i) */
	GP_FIELD_HEX,                  /* an integer (v.i), written 0x%04x in CSV and tables */
	GP_FIELD_NUM,                  /* a number (v.d) with v.prec decimals */
	GP_FIELD_WORDS,                /* words separated by spaces (v.s): a JSON array of strings */
	GP_FIELD_JSON,                 /* written by the field's own json(); v.s is its text form */
};

/* A field's value, as get() fills it (zeroed first). */
struct gp_value {
	int null;                      /* unknown or absent: JSON null, empty in CSV, "-" in a table */
	int omit;                      /* not there for this record: no JSON key at all (empty in CSV) */
	const char *s;                 /* STR, WORDS, JSON: the value; other types: a text form that replaces the
	                                  number in CSV and tables (a word such as "unknown") when set */
	long long i;                   /* INT, BOOL, HEX */
	uint64_t u;                    /* U64 */
	double d;                      /* NUM */
	int prec;                      /* NUM: decimals */
	struct gp_buf *buf;            /* scratch get() may build s in (reset before each call) */
	char num[48];                  /* the text form of a number, filled by gp_field_text */
};

#define GP_FIELD_HOST 1u               /* a fact of the host, not of the record: in CSV and JSON lines each
                                          record repeats it; a JSON document states it once, not per record */
#define GP_FIELD_LEFT 2u               /* the text table's column aligned left (default: numbers right) */
#define GP_FIELD_RIGHT 4u              /* the text table's column aligned right (default: text left) */
#define GP_FIELD_VIEW(k) (1u << (8 + (k))) /* shown only in the text table's view k (0-7) and others named
                                          so; a field with a header and no view bit is in every view */
#define GP_FIELD_VIEWS 0xff00u
#define GP_FIELD_HANG 8u               /* a text block's line: continued under its value, not 4 columns in */
#define GP_FIELD_NOSEP 16u             /* a text block's line: the label, then the text with its own separator
                                          ("IOMMU group" " 5, type DMA"), not "LABEL: TEXT" */

struct gp_field {
	const char *key;               /* JSON key; NULL: not in JSON */
	const char *csv;               /* CSV column name; NULL: not in CSV */
	int col;                       /* its CSV column, 1 first: a column never moves, a new one comes last */
	const char *header;            /* text table header, or a text block's label ("": the record's first line);
	                                  NULL: not in the text */
	enum gp_field_type type;
	unsigned flags;                /* GP_FIELD_HOST */
	void (*get)(const void *rec, struct gp_value *v);
	/* GP_FIELD_JSON: write the value under key into j */
	void (*json)(const void *rec, struct gp_json *j, const char *key);
	/* The text table's column, when header is set: */
	int pos;                       /* its place, left to right (0: in list order, before those placed) */
	void (*text)(const void *rec, struct gp_value *v); /* the value as the table shows it (v.s); NULL: as
	                                                      in CSV, an unknown value as "-" */
};

/* The text of field f of rec (CSV, tables): v->s when set, "" when null, else the number; v is filled
 * (its buf given by the caller, may be NULL when no getter uses it). */
const char *gp_field_text(const struct gp_field *f, const void *rec, struct gp_value *v);
/* Write the JSON members of rec's n fields into the open object of j; GP_FIELD_HOST fields only when
 * host. buf: scratch for the getters (may be NULL when none needs it). */
void gp_fields_json(struct gp_json *j, const struct gp_field *f, int n, const void *rec, int host,
		    struct gp_buf *buf);
/* The CSV header line: the column names in column order. */
void gp_fields_csv_header(FILE *out, const struct gp_field *f, int n);
/* One CSV line of rec, in column order. */
void gp_fields_csv_row(FILE *out, const struct gp_field *f, int n, const void *rec, struct gp_buf *buf);
/* Whether field f is a column of the text table's view (a GP_FIELD_VIEW(k), or 0 for a list without views). */
int gp_field_in_view(const struct gp_field *f, unsigned view);
/* The fields of view's columns (or a text block's lines), left to right: their indices into f in col[], by
 * pos (list order among equals, 0 first). Their count, at most max. */
int gp_fields_view(const struct gp_field *f, int n, unsigned view, int *col, int max);
/* Field f of rec as the text shows it: its text() (NULL: "") or, without one, its CSV text with an unknown
 * value as "-". v->buf: the getters' scratch (may be NULL when none needs it). */
const char *gp_field_table_text(const struct gp_field *f, const void *rec, struct gp_value *v);
/* Start t with the columns of view (the fields with a header in it, ordered by pos, aligned as their flags
 * or type say) and the header row. 0 or -ENOMEM. */
int gp_fields_table_init(struct gp_table *t, const struct gp_field *f, int n, unsigned view);
/* Append rec's row to a table gp_fields_table_init started with the same view: each column's text() or, without
 * one, its CSV text (an unknown value as "-"). 0 or -ENOMEM. */
int gp_fields_table_row(struct gp_table *t, const struct gp_field *f, int n, unsigned view, const void *rec,
			struct gp_buf *buf);

/* Decide whether to colour: mode "always", "never" or "auto" (a TTY and NO_COLOR unset). */
int gp_out_use_color(const char *mode, FILE *f);

/* Parse "auto|always|never"; 0 or -EINVAL. */
int gp_out_parse_color(const char *s);

/* Prometheus text exposition (node_exporter's textfile collector reads it): the "# HELP" and
 * "# TYPE" lines of metric name (type "gauge", "counter", ...); help is escaped. */
void gp_prom_family(FILE *f, const char *name, const char *type, const char *help);
/* One sample, no timestamp: name{k0="v0",...} value; labels holds nlabels key/value pairs (a NULL
 * value prints ""); values are escaped, non-UTF-8 bytes become U+FFFD. */
void gp_prom_sample(FILE *f, const char *name, const char *const *labels, int nlabels, double v);

/* Replace the file at path with len bytes of data atomically: a temporary file next to it (.NAME.XXXXXX,
 * mode 0644) written, synced and renamed over path; it never stays behind. *created (may be NULL) says
 * whether the temporary file could be made. 0 or -errno. */
int gp_out_write_atomic(const char *path, const void *data, size_t len, int *created);

/* Replace dir/name with len bytes of data atomically: written to a temporary file in dir (named
 * .name.XXXXXX, mode 0644), synced, then renamed over name. 0 or -errno (GP_E_PERM, GP_E_USAGE
 * when dir is not there, GP_E_FAIL); the temporary file never stays behind. */
int gp_out_replace_file(const char *dir, const char *name, const void *data, size_t len, struct gp_err *e);

#endif
