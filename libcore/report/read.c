/* gpup2p — report: read files, directories and `host: line` streams into JSON documents. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/internal.h"

/* srun cuts a task's output every 1024 bytes and labels each piece as a line of its own
 * ("2: " + 1024 bytes, "2: " + the rest); pdsh writes whole lines (up to 128 KiB). A piece of
 * exactly this length inside an open document is a line cut short: the next piece of the same key
 * goes on where it stopped, with no newline (tests/cli/test_report_srun.sh has srun's own output). */
#define SRUN_PIECE 1024

/* A document being gathered from one stream key (a label, or "" for unlabelled lines). */
struct pend {
	char *key;
	char *buf;
	size_t n, cap;
	int line;                      /* where it began; 0 when none is open */
	int depth, in_str, esc;
	int cut;                       /* the last piece was SRUN_PIECE bytes: the next continues it */
};

struct reader {
	struct gp_report *r;
	const char *source, *host;
	struct pend *p;
	int np, cap;
	struct gp_strmap map;
};

static struct pend *pend_of(struct reader *rd, const char *key)
{
	int i = gp_strmap_get(&rd->map, key);

	if (i >= 0)
		return &rd->p[i];
	if (rd->np == rd->cap) {
		int cap = rd->cap ? rd->cap * 2 : 16;
		struct pend *p = realloc(rd->p, (size_t)cap * sizeof(*p));

		if (!p)
			return NULL;
		rd->p = p;
		rd->cap = cap;
	}
	memset(&rd->p[rd->np], 0, sizeof(rd->p[0]));
	if (!(rd->p[rd->np].key = strdup(key)) || gp_strmap_put(&rd->map, key, rd->np))
		return NULL;
	return &rd->p[rd->np++];
}

/* Add a piece to the document: a line of its own, or (p->cut) the rest of the last line. */
static int append(struct pend *p, const char *s, size_t n)
{
	if (p->cut && p->n && p->buf[p->n - 1] == '\n')
		p->n--;
	if (p->n + n + 2 > p->cap) {
		size_t cap = (p->n + n + 2) * 2;
		char *b = realloc(p->buf, cap);

		if (!b)
			return -ENOMEM;
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->n, s, n);
	p->n += n;
	p->buf[p->n++] = '\n';
	p->buf[p->n] = '\0';
	return 0;
}

/* Follow the braces of s outside strings: depth 0 again closes the document. */
static void scan(struct pend *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (p->in_str) {
			if (p->esc)
				p->esc = 0;
			else if (c == '\\')
				p->esc = 1;
			else if (c == '"')
				p->in_str = 0;
		} else if (c == '"') {
			p->in_str = 1;
		} else if (c == '{' || c == '[') {
			p->depth++;
		} else if (c == '}' || c == ']') {
			p->depth--;
		}
	}
}

/* The host a document names, found in raw text that does not parse: "host":"NAME". */
static const char *raw_host(const char *s, char *buf, size_t len)
{
	const char *h = strstr(s, "\"host\"");
	size_t n;

	if (!h)
		return NULL;
	h += 6;
	h += strspn(h, " \t");
	if (*h++ != ':')
		return NULL;
	h += strspn(h, " \t");
	if (*h++ != '"')
		return NULL;
	n = strcspn(h, "\"\\\n");
	if (!n || h[n] != '"' || n >= len)
		return NULL;
	memcpy(buf, h, n);
	buf[n] = '\0';
	return gp_hostlist_valid(buf) ? buf : NULL;
}

/* The host of a stream key: a label that is a number (srun --label's task) names none. */
static const char *key_host(const struct reader *rd, const char *key)
{
	if (*key && key[strspn(key, "0123456789")])
		return key;
	return rd->host;
}

static void pend_reset(struct pend *p)
{
	p->n = 0;
	p->line = 0;
	p->depth = p->in_str = p->esc = p->cut = 0;
}

/* A document is complete (or cut short: why != NULL): parse it and hand it over. */
static int pend_flush(struct reader *rd, struct pend *p, const char *cut)
{
	const char *host = key_host(rd, p->key);
	char why[160], hb[GP_HOSTNAME_MAX + 1];
	struct gp_jdoc d;
	int rc;

	if (!p->line)
		return 0;
	if (cut) {
		rc = report_bad(rd->r, rd->source, p->line, host ? host : raw_host(p->buf, hb, sizeof(hb)),
				"truncated JSON: the document begun here %s", cut);
	} else if ((rc = gp_jdoc_parse(&d, p->buf, p->n, why, sizeof(why))) == 0) {
		rc = report_doc(rd->r, d.root, host, rd->source, p->line);
		gp_jdoc_free(&d);
	} else if (rc == -ENOMEM) {
		return rc;
	} else {
		rc = report_bad(rd->r, rd->source, p->line, host ? host : raw_host(p->buf, hb, sizeof(hb)),
				"bad JSON: %s", why);
	}
	pend_reset(p);
	return rc;
}

void report_excerpt(const char *s, char *out, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 4 < len && i < 40; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	snprintf(out + i, len - i, "%s", s[i] ? "..." : "");
}

/* Split "label: text": a label is a host name (or srun's task number) ended by ':' and a space. */
static const char *label(char *line, char *key, size_t klen)
{
	const char *s = line + strspn(line, " ");
	size_t n = 0;

	while (s[n] && n < klen - 1 && gp_hostlist_name_char((unsigned char)s[n]))
		n++;
	if (!n || s[n] != ':' || (s[n + 1] != ' ' && s[n + 1] != '\0')) {
		key[0] = '\0';
		return line;
	}
	memcpy(key, s, n);
	key[n] = '\0';
	return s[n + 1] ? s + n + 2 : s + n + 1;
}

static int one_line(struct reader *rd, char *line, int ln)
{
	char key[GP_HOSTNAME_MAX + 1], ex[64], at[64];
	const char *text = label(line, key, sizeof(key));
	const char *t = text + strspn(text, " \t");
	struct pend *p = pend_of(rd, key);
	size_t n = strlen(text);
	int rc;

	if (!p)
		return -ENOMEM;
	if (!*t) {
		if (!p->line)
			return 0;
	} else if (text[0] == '{' && p->line && !p->cut) {
		/* a new document at column 0 while one is open: the open one was cut short */
		snprintf(at, sizeof(at), "is not closed before line %d", ln);
		if ((rc = pend_flush(rd, p, at)))
			return rc;
	}
	if (!p->line) {
		if (*t != '{') {
			const char *h = key_host(rd, key);

			report_excerpt(t, ex, sizeof(ex));
			return report_bad(rd->r, rd->source, ln, h, "not JSON: '%s'", ex);
		}
		p->line = ln;
	}
	if (append(p, text, n))
		return -ENOMEM;
	p->cut = n == SRUN_PIECE;
	scan(p, text, n);
	return p->depth <= 0 ? pend_flush(rd, p, NULL) : 0;
}

int gp_report_read_stream(struct gp_report *r, FILE *f, const char *source, const char *host, struct gp_err *e)
{
	struct reader rd = { .r = r, .source = source, .host = host };
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ln = 0, rc = 0, text = 0;

	while (!rc && (n = getline(&line, &cap, f)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		text |= line[strspn(line, " \t")] != '\0';
		if (memchr(line, '\0', (size_t)n)) {
			rc = report_bad(r, source, ++ln, host, "a NUL byte in the line");
			continue;
		}
		rc = one_line(&rd, line, ++ln);
	}
	if (!rc && !text && host) /* clush --outdir: the host's file, empty */
		rc = report_bad(r, source, 0, host, "empty: the host printed nothing");
	if (!rc && ferror(f))
		rc = report_bad(r, source, 0, host, "read error: %s", strerror(errno));
	for (int i = 0; i < rd.np; i++) {
		if (!rc)
			rc = pend_flush(&rd, &rd.p[i], "is not closed at the end of the input");
		free(rd.p[i].key);
		free(rd.p[i].buf);
	}
	free(rd.p);
	free(line);
	gp_strmap_free(&rd.map);
	return rc ? gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory") : 0;
}

static int read_file(struct gp_report *r, const char *path, const char *host, struct gp_err *e)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f)
		return report_bad(r, path, 0, host, "cannot open: %s", strerror(errno)) ?
			gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory") : 0;
	rc = gp_report_read_stream(r, f, path, host, e);
	fclose(f);
	return rc;
}

int gp_report_read_path(struct gp_report *r, const char *path, struct gp_err *e)
{
	struct gp_hostlist names = { 0 };
	struct stat st;
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return read_file(r, path, NULL, e);
	if (!(d = opendir(path)))
		return report_bad(r, path, 0, NULL, "cannot open: %s", strerror(errno)) ?
			gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory") : 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && gp_hostlist_add(&names, de->d_name)) {
			rc = gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
			break;
		}
	closedir(d);
	gp_hostlist_uniq(&names); /* in host order: node2 before node10 */
	for (int i = 0; !rc && i < names.n; i++) {
		size_t l = strlen(path) + strlen(names.v[i]) + 2;
		char *p = malloc(l);

		if (!p) {
			rc = gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
			break;
		}
		snprintf(p, l, "%s/%s", path, names.v[i]);
		if (!gp_hostlist_valid(names.v[i])) {
			char ex[64];

			report_excerpt(names.v[i], ex, sizeof(ex));
			rc = report_bad(r, path, 0, NULL, "a file name that is no host name: '%s'", ex) ?
			     gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory") : 0;
		} else if (!stat(p, &st) && S_ISDIR(st.st_mode))
			rc = report_bad(r, p, 0, NULL, "a directory inside the directory (one file per host expected)") ?
			     gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory") : 0;
		else
			rc = read_file(r, p, names.v[i], e);
		free(p);
	}
	gp_hostlist_free(&names);
	return rc;
}
