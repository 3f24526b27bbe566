/* Unit tests: JSON strings from arbitrary bytes (sysfs text is not always UTF-8), the growing string
 * buffer, Prometheus text (escaping, no timestamps) and the atomic replacement of a file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpup2p/buf.h"
#include "gpup2p/out.h"
#include "unit.h"

/* The JSON text gp_json_str writes for s at top level (one line, no key), newline removed. */
static const char *json_of(const char *s)
{
	static char out[512];
	struct gp_json j;
	FILE *f = fmemopen(out, sizeof(out), "w");

	gp_json_init(&j, f, 0);
	gp_json_arr(&j, NULL);
	gp_json_str(&j, NULL, s);
	gp_json_end(&j, ']');
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return out;
}

static void json_tests(void)
{
	/* valid UTF-8 passes through byte for byte */
	CHECK_STR(json_of("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"),
		  "[\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"]",
		  "2-, 3- and 4-byte sequences and U+10FFFF kept as they are");
	CHECK_STR(json_of("\xed\x9f\xbf\xee\x80\x80"), "[\"\xed\x9f\xbf\xee\x80\x80\"]", "U+D7FF and U+E000 (beside the surrogates) kept");
	/* control characters */
	CHECK_STR(json_of("a\x01" "b\x1f" "c\x7f" "d\n\t\r\"\\"), "[\"a\\u0001b\\u001fc\\u007fd\\n\\t\\r\\\"\\\\\"]",
		  "controls and DEL as \\u00XX, the usual short escapes");
	/* invalid: each byte that starts no well-formed sequence is U+FFFD */
	CHECK_STR(json_of("x\x80y"), "[\"x\\ufffdy\"]", "lone continuation byte");
	CHECK_STR(json_of("\xff\xfe"), "[\"\\ufffd\\ufffd\"]", "0xFF 0xFE (never in UTF-8)");
	CHECK_STR(json_of("\xc0\xaf"), "[\"\\ufffd\\ufffd\"]", "overlong '/' (C0 AF)");
	CHECK_STR(json_of("\xe0\x80\xaf"), "[\"\\ufffd\\ufffd\\ufffd\"]", "overlong 3-byte (E0 80 AF)");
	CHECK_STR(json_of("\xed\xa0\x80"), "[\"\\ufffd\\ufffd\\ufffd\"]", "UTF-16 surrogate U+D800 (ED A0 80)");
	CHECK_STR(json_of("\xf4\x90\x80\x80"), "[\"\\ufffd\\ufffd\\ufffd\\ufffd\"]", "above U+10FFFF (F4 90 80 80)");
	CHECK_STR(json_of("\xf5\x80"), "[\"\\ufffd\\ufffd\"]", "F5 lead byte");
	CHECK_STR(json_of("ok\xe2\x82"), "[\"ok\\ufffd\\ufffd\"]", "sequence cut by the end of the string");
	CHECK_STR(json_of("\xc3" "A"), "[\"\\ufffdA\"]", "lead byte followed by ASCII: the ASCII survives");
	CHECK_STR(json_of("\xe2\x82\"x"), "[\"\\ufffd\\ufffd\\\"x\"]", "cut sequence before a quote: the quote still escaped");
}

/* A record for the field list: two facts of its own and one of the host. */
struct frec {
	const char *name;
	int ctl;                       /* -1 unknown */
	const char *pairs;
};

static void g_name(const void *x, struct gp_value *v) { v->s = ((const struct frec *)x)->name; v->null = !v->s; }
static void g_ctl(const void *x, struct gp_value *v) { v->i = ((const struct frec *)x)->ctl; v->null = v->i < 0; }
static void g_pairs(const void *x, struct gp_value *v) { v->s = ((const struct frec *)x)->pairs; }

static void g_word(const void *x, struct gp_value *v)
{
	v->i = ((const struct frec *)x)->ctl > 0, v->s = v->i ? "yes" : "no";
}

static void g_host(const void *x, struct gp_value *v)
{
	(void)x;
	gp_buf_addf(v->buf, "dmar%d", 0);
	v->s = gp_buf_str(v->buf);
}

static void g_gbps(const void *x, struct gp_value *v)
{
	v->d = 12.345, v->prec = 2, v->null = !((const struct frec *)x)->name;
}

static void g_off(const void *x, struct gp_value *v) { v->i = 7, v->omit = !((const struct frec *)x)->name; }

static char *fields_out(int how, const struct frec *r)
{
	static const struct gp_field f[] = {
		{ "name", "name", 1, "NAME", GP_FIELD_STR, 0, g_name, NULL, 0, NULL },
		{ "pairs", "pairs", 4, NULL, GP_FIELD_WORDS, 0, g_pairs, NULL, 0, NULL },
		{ "ctl", "ctl", 2, "CTL", GP_FIELD_HEX, 0, g_ctl, NULL, 0, NULL },
		{ "redirects", "redirects", 3, "REDIR", GP_FIELD_BOOL, 0, g_word, NULL, 0, NULL },
		{ "unit", "unit", 5, NULL, GP_FIELD_STR, GP_FIELD_HOST, g_host, NULL, 0, NULL },
		{ "gbps", "gbps", 6, "GB/s", GP_FIELD_NUM, 0, g_gbps, NULL, 0, NULL },
		{ "offset", NULL, 0, NULL, GP_FIELD_INT, 0, g_off, NULL, 0, NULL },
	};
	struct gp_buf b = GP_BUF_INIT;
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);
	struct gp_json j;
	struct gp_table t;

	if (how == 0) {
		gp_fields_csv_header(fp, f, 7);
		gp_fields_csv_row(fp, f, 7, r, &b);
	} else if (how == 3) {
		gp_fields_table_init(&t, f, 7, 0);
		gp_fields_table_row(&t, f, 7, 0, r, &b);
		gp_table_print(&t, fp, 0, 2, NULL);
		gp_table_free(&t);
	} else {
		gp_json_init(&j, fp, 0);
		gp_json_obj(&j, NULL);
		gp_fields_json(&j, f, 7, r, how == 2, &b);
		gp_json_end(&j, '}');
	}
	fclose(fp);
	gp_buf_free(&b);
	return out;
}

static void t_gbps(const void *x, struct gp_value *v)
{
	v->s = ((const struct frec *)x)->name ? "12.3 <" : "error";
}

/* The table of view (0: a list's columns without views) of a list whose columns are placed, aligned and
 * worded by the list: 1 bandwidth, 2 latency. */
static char *views_out(unsigned view, const struct frec *r)
{
	static const struct gp_field f[] = {
		{ "gbps", "gbps", 1, "GB/s", GP_FIELD_NUM, GP_FIELD_LEFT | GP_FIELD_VIEW(1), g_gbps, NULL, 3, t_gbps },
		{ "name", "name", 2, "NAME", GP_FIELD_STR, 0, g_name, NULL, 1, NULL },
		{ "ctl", "ctl", 3, "CTL", GP_FIELD_HEX, GP_FIELD_RIGHT | GP_FIELD_VIEW(2), g_ctl, NULL, 2, NULL },
		{ "pairs", "pairs", 4, "PAIRS", GP_FIELD_WORDS, GP_FIELD_VIEW(1) | GP_FIELD_VIEW(2), g_pairs, NULL, 0, NULL },
		{ "offset", NULL, 0, NULL, GP_FIELD_INT, 0, g_off, NULL, 0, NULL },
	};
	struct gp_buf b = GP_BUF_INIT;
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);
	struct gp_table t;

	gp_fields_table_init(&t, f, 5, view);
	gp_fields_table_row(&t, f, 5, view, r, &b);
	gp_table_print(&t, fp, 0, 2, NULL);
	gp_table_free(&t);
	fclose(fp);
	gp_buf_free(&b);
	return out;
}

static void views_tests(void)
{
	struct frec a = { "0000:00:01.0", 0x1d, "GPU0-GPU1 GPU0-NIC0" }, u = { NULL, -1, "" };
	char *s;

	s = views_out(GP_FIELD_VIEW(1), &a);
	CHECK_STR(s, "PAIRS                NAME          GB/s\nGPU0-GPU1 GPU0-NIC0  0000:00:01.0  12.3 <\n",
		  "view 1: its fields and those of every view, by pos (0 first); text() replaces the number, left");
	free(s);
	s = views_out(GP_FIELD_VIEW(2), &u);
	CHECK_STR(s, "PAIRS  NAME  CTL\n       -       -\n",
		  "view 2: the latency columns; a text field right-aligned by its flag; unknown as -");
	free(s);
	s = views_out(0, &a);
	CHECK_STR(s, "NAME\n0000:00:01.0\n", "no view: only the fields in every view");
	free(s);
}

static void fields_tests(void)
{
	struct frec a = { "0000:00:01.0", 0x1d, "GPU0-GPU1 GPU0-NIC0" }, u = { NULL, -1, "" };
	char *s;

	s = fields_out(0, &a);
	CHECK_STR(s, "name,ctl,redirects,pairs,unit,gbps\n0000:00:01.0,0x001d,yes,GPU0-GPU1 GPU0-NIC0,dmar0,12.35\n",
		  "CSV: columns by number, not by declaration; HEX as 0x%%04x, a word replaces the boolean");
	free(s);
	s = fields_out(0, &u);
	CHECK_STR(s, "name,ctl,redirects,pairs,unit,gbps\n,,no,,dmar0,\n", "CSV: unknown values empty");
	free(s);
	s = fields_out(1, &a);
	CHECK_STR(s, "{\"name\": \"0000:00:01.0\", \"pairs\": [\"GPU0-GPU1\", \"GPU0-NIC0\"], \"ctl\": 29, "
		  "\"redirects\": true, \"gbps\": 12.35, \"offset\": 7}\n",
		  "JSON: declaration order, words as an array, no host fact in a document's record");
	free(s);
	s = fields_out(2, &u);
	CHECK_STR(s, "{\"name\": null, \"pairs\": [], \"ctl\": null, \"redirects\": false, \"unit\": \"dmar0\", "
		  "\"gbps\": null}\n",
		  "JSON lines: unknown as null, an omitted key left out, the host's fact in each record");
	free(s);
	s = fields_out(3, &a);
	CHECK_STR(s, "NAME          CTL     REDIR   GB/s\n0000:00:01.0  0x001d  yes    12.35\n",
		  "table: the fields with a header, numbers right-aligned");
	free(s);
	s = fields_out(3, &u);
	CHECK_STR(s, "NAME  CTL  REDIR  GB/s\n-     -    no        -\n", "table: an unknown value as -");
	free(s);
}

static void buf_tests(void)
{
	struct gp_buf b = GP_BUF_INIT;
	size_t want = 0;
	int ok = 1;

	CHECK_STR(gp_buf_str(&b), "", "empty buffer reads as \"\"");
	for (int i = 0; i < 1000 && ok; i++) {
		ok = gp_buf_addf(&b, "%s0000:%02x:00.0", i ? ";" : "pci=disable_acs_redir=", i & 0xff) == 0;
		want += (i ? 1 : 22) + 12;
	}
	CHECK(ok && b.len == want && strlen(gp_buf_str(&b)) == want && !b.oom,
	      "1000 appends: %zu bytes, nothing cut (%zu)", want, b.len);
	CHECK(!strncmp(gp_buf_str(&b), "pci=disable_acs_redir=0000:00:00.0;0000:01:00.0;", 48) &&
	      !strcmp(gp_buf_str(&b) + want - 13, ";0000:e7:00.0"), "first and last entries intact");
	gp_buf_reset(&b);
	CHECK(b.len == 0 && !strcmp(gp_buf_str(&b), "") && gp_buf_addf(&b, "%d", 42) == 0 &&
	      !strcmp(gp_buf_str(&b), "42"), "reset, then reuse");
	CHECK(gp_buf_add(&b, " ", "GPU0", "-", "", "NIC12", (char *)NULL) == 0 && gp_buf_add(&b, (char *)NULL) == 0 &&
	      !strcmp(gp_buf_str(&b), "42 GPU0-NIC12") && b.len == 13, "gp_buf_add: pieces in order, empty ones "
	      "and none at all add nothing (%s)", gp_buf_str(&b));
	gp_buf_reset(&b);
	for (int i = 0; i < 100000 && ok; i++)
		ok = gp_buf_add(&b, i ? " " : "", "GPU7-NIC3991", (char *)NULL) == 0;
	CHECK(ok && b.len == 100000 * 13 - 1 && strlen(gp_buf_str(&b)) == b.len && !b.oom,
	      "gp_buf_add 100000 times: %zu bytes, nothing cut", b.len);
	gp_buf_free(&b);
	CHECK(b.s == NULL && b.len == 0 && b.cap == 0, "free empties it");
}

/* What gp_prom_sample writes for one metric with up to two labels. */
static const char *prom_of(const char *k1, const char *v1, const char *k2, const char *v2, double v)
{
	static char out[512];
	const char *lab[4] = { k1, v1, k2, v2 };
	FILE *f = fmemopen(out, sizeof(out), "w");

	gp_prom_sample(f, "gpup2p_x", lab, k2 ? 2 : k1 ? 1 : 0, v);
	fclose(f);
	return out;
}

static void prom_tests(void)
{
	char out[512];
	FILE *f;

	/* the exposition format (prometheus.io/docs/instrumenting/exposition_formats): in label values
	 * backslash, double quote and line feed are escaped, nothing else; the value ends the line */
	CHECK_STR(prom_of(NULL, NULL, NULL, NULL, 2), "gpup2p_x 2\n", "no labels: name, space, value");
	CHECK_STR(prom_of("id", "acs.redirect", "subject", "0000:02:00.0", 1),
		  "gpup2p_x{id=\"acs.redirect\",subject=\"0000:02:00.0\"} 1\n", "two labels, comma, no spaces");
	CHECK_STR(prom_of("subject", "a\\b\"c\nd\te", NULL, NULL, 0), "gpup2p_x{subject=\"a\\\\b\\\"c\\nd\te\"} 0\n",
		  "label value: \\ \" and newline escaped, tab kept");
	CHECK_STR(prom_of("subject", "x\xff", NULL, NULL, 0), "gpup2p_x{subject=\"x\xef\xbf\xbd\"} 0\n",
		  "label value: a byte that is not UTF-8 becomes U+FFFD");
	CHECK_STR(prom_of("subject", NULL, NULL, NULL, 0), "gpup2p_x{subject=\"\"} 0\n", "NULL label value: empty");
	CHECK_STR(prom_of(NULL, NULL, NULL, NULL, 25e9), "gpup2p_x 25000000000\n", "25 GB/s in bytes/s, all digits");
	CHECK_STR(prom_of(NULL, NULL, NULL, NULL, 0.25), "gpup2p_x 0.25\n", "a fraction");
	CHECK_STR(prom_of(NULL, NULL, NULL, NULL, NAN), "gpup2p_x NaN\n", "NaN as the format spells it");
	CHECK_STR(prom_of(NULL, NULL, NULL, NULL, -INFINITY), "gpup2p_x -Inf\n", "-Inf as the format spells it");
	f = fmemopen(out, sizeof(out), "w");
	gp_prom_family(f, "gpup2p_x", "gauge", "a \"quoted\" \\ help\nline");
	fclose(f);
	/* in HELP only backslash and line feed are escaped */
	CHECK_STR(out, "# HELP gpup2p_x a \"quoted\" \\\\ help\\nline\n# TYPE gpup2p_x gauge\n", "HELP escaped, TYPE line");
}

/* The names in dir, sorted, space separated. */
static const char *ls(const char *dir)
{
	static char out[1024];
	struct dirent **v;
	int n = scandir(dir, &v, NULL, alphasort);

	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i]->d_name, ".") && strcmp(v[i]->d_name, ".."))
			snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", out[0] ? " " : "", v[i]->d_name);
		free(v[i]);
	}
	free(v);
	return out;
}

static void replace_tests(void)
{
	char dir[] = "/tmp/gpup2p-out-XXXXXX", path[64], got[64] = "", missing[96];
	struct gp_err e = { 0 };
	struct stat st;
	int fd, rc;
	ssize_t n;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	rc = gp_out_replace_file(dir, "m.prom", "old\n", 4, &e);
	CHECK(rc == 0 && stat(path, &st) == 0 && (st.st_mode & 0777) == 0644 && st.st_size == 4,
	      "a new file: written whole, mode 0644 (%s)", e.msg);
	/* a reader that opened the old file still reads the old file: replaced by rename, not rewritten */
	fd = open(path, O_RDONLY);
	rc = gp_out_replace_file(dir, "m.prom", "new text\n", 9, &e);
	n = fd >= 0 ? pread(fd, got, sizeof(got) - 1, 0) : -1;
	CHECK(rc == 0 && n == 4 && !memcmp(got, "old\n", 4), "the old file's reader still sees it whole (%zd bytes)", n);
	if (fd >= 0)
		close(fd);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, got, sizeof(got) - 1) : -1;
	CHECK(n == 9 && !memcmp(got, "new text\n", 9), "the name now holds the new text");
	if (fd >= 0)
		close(fd);
	CHECK_STR(ls(dir), "m.prom", "no temporary file left behind");
	snprintf(missing, sizeof(missing), "%s/nosuch", dir);
	gp_err_clear(&e);
	rc = gp_out_replace_file(missing, "m.prom", "x", 1, &e);
	CHECK(rc == -ENOENT && e.cls == GP_E_USAGE && strstr(e.msg, missing), "no such directory: -ENOENT, usage (%s)",
	      e.msg);
	{
		char sub[160];
		int created = -1;

		snprintf(sub, sizeof(sub), "%s/nosuch/m.prom", dir);
		rc = gp_out_write_atomic(sub, "x", 1, &created);
		CHECK(rc == -ENOENT && created == 0, "gp_out_write_atomic, no such directory: -ENOENT, nothing made (%d)", rc);
		rc = gp_out_write_atomic(path, "atomic\n", 7, &created);
		fd = open(path, O_RDONLY);
		n = fd >= 0 ? read(fd, got, sizeof(got) - 1) : -1;
		CHECK(rc == 0 && created == 1 && n == 7 && !memcmp(got, "atomic\n", 7), "gp_out_write_atomic by path: "
		      "the new text (%d)", rc);
		if (fd >= 0)
			close(fd);
		CHECK_STR(ls(dir), "m.prom", "no temporary file left behind");
	}
	unlink(path);
	rmdir(dir);
}

/* Text from other machines made safe for a terminal: controls, DEL, C1, bidi overrides, bad UTF-8. */
static void escape_tests(void)
{
	static const struct { const char *in, *want, *what; } c[] = {
		{ "node01: ok", "node01: ok", "plain ASCII unchanged" },
		{ "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80", "UTF-8 kept" },
		{ "\x1b[2J\x1b]0;t\x07", "\\x1b[2J\\x1b]0;t\\x07", "ESC and BEL escaped" },
		{ "a\r\nclean: n[1-9]\tz", "a\\r\\nclean: n[1-9]\\tz", "CR, LF, TAB as \\r \\n \\t" },
		{ "del\x7f", "del\\x7f", "DEL escaped" },
		{ "csi\xc2\x9b" "2J", "csi\\u009b2J", "a C1 control (U+009B) escaped" },
		{ "raw\x9b" "2J", "raw\\x9b2J", "a lone 0x9b byte (8-bit CSI) escaped" },
		{ "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80x\xe2\x82", "\\xc0\\xaf\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80x\\xe2\\x82",
		  "overlong, surrogate, above U+10FFFF, cut sequence: bytes escaped" },
		{ "abc\xe2\x80\xae" "def\xe2\x81\xa6", "abc\\u202edef\\u2066", "bidi override and isolate escaped" },
		{ "", "", "empty" },
	};
	struct gp_buf b = GP_BUF_INIT;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		gp_buf_reset(&b);
		CHECK(gp_out_escape(&b, c[i].in) == 0 && !strcmp(gp_buf_str(&b), c[i].want), "gp_out_escape: %s (%s)",
		      c[i].what, gp_buf_str(&b));
	}
	gp_buf_free(&b);
}

int main(void)
{
	escape_tests();
	prom_tests();
	replace_tests();
	json_tests();
	fields_tests();
	views_tests();
	buf_tests();
	return unit_done();
}
