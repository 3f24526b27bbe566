/* Unit tests: gpup2p report's reading (labels, multi-line documents, malformed input) and folding. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpup2p/report.h"
#include "unit.h"

/* A doctor document as doctor --json writes it (compact: the new envelope; pretty: the old one). */
static void doctor_doc(char *buf, size_t n, const char *host, const char *sev, const char *subject, int pretty)
{
	if (pretty)
		snprintf(buf, n,
			 "{\n  \"schema\": 1,\n  \"command\": \"doctor\",\n  \"host\": \"%s\",\n  \"summary\": {\n"
			 "    \"error\": %d\n  },\n  \"findings\": [\n    {\n      \"id\": \"acs.redirect\",\n"
			 "      \"severity\": \"%s\",\n      \"subject\": \"%s\",\n      \"message\": \"m {x}\"\n"
			 "    }\n  ]\n}\n", host, !strcmp(sev, "error"), sev, subject);
	else
		snprintf(buf, n,
			 "{\"schema\":1,\"command\":\"doctor\",\"host\":\"%s\",\"boot_id\":\"b\",\"time\":\"t\","
			 "\"gpup2p\":{\"version\":\"0.1.0\",\"argv\":[\"doctor\",\"--json\"]},\"findings\":[{\"id\":"
			 "\"acs.redirect\",\"severity\":\"%s\",\"subject\":\"%s\",\"message\":\"m {x}\",\"fix\":\"f\"}],"
			 "\"exit_status\":%d}\n", host, sev, subject, !strcmp(sev, "error") ? 2 : 0);
}

/* Prefix every line of text with "label: " into out. */
static void labelled(char *out, size_t n, const char *label, const char *text)
{
	size_t k = 0;

	out[0] = '\0';
	while (*text && k < n) {
		size_t l = strcspn(text, "\n");

		k += (size_t)snprintf(out + k, n - k, "%s: %.*s\n", label, (int)l, text);
		text += l + (text[l] == '\n');
	}
}

static int read_text(struct gp_report *r, const char *text, const char *host)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct gp_err e = { 0 };
	int rc = gp_report_read_stream(r, f, "stdin", host, &e);

	fclose(f);
	return rc;
}

static const struct gp_report_group *group(const struct gp_report *r, const char *sev)
{
	for (int i = 0; i < r->ngroup; i++)
		if (!strcmp(r->group[i].severity, sev))
			return &r->group[i];
	return NULL;
}

/* pdsh output: hosts' lines interleaved, pretty documents over many lines, a garbage line. */
static void test_interleaved(void)
{
	char a[2048], b[2048], la[4096], lb[4096], in[16384];
	struct gp_report r;
	struct gp_err e = { 0 };
	const char *pa, *pb;
	size_t k = 0;

	doctor_doc(a, sizeof(a), "ignored", "error", "0000:00:01.0", 1);
	doctor_doc(b, sizeof(b), "ignored", "ok", "0000:00:01.0", 1);
	labelled(la, sizeof(la), "node02", a);
	labelled(lb, sizeof(lb), "node01", b);
	/* one line of each in turn */
	for (pa = la, pb = lb; *pa || *pb;) {
		size_t l;

		if (*pa) {
			l = strcspn(pa, "\n") + 1;
			k += (size_t)snprintf(in + k, sizeof(in) - k, "%.*s", (int)l, pa);
			pa += l;
		}
		if (*pb) {
			l = strcspn(pb, "\n") + 1;
			k += (size_t)snprintf(in + k, sizeof(in) - k, "%.*s", (int)l, pb);
			pb += l;
		}
	}
	snprintf(in + k, sizeof(in) - k, "node03: ssh: connect to host node03 port 22: Connection refused\n");
	gp_report_init(&r);
	CHECK(gp_report_expect(&r, "node[01-04]", &e) == 0, "--expect node[01-04] parses");
	CHECK(read_text(&r, in, NULL) == 0, "an interleaved pdsh stream reads");
	CHECK(gp_report_fold(&r, 0.9, &e) == 0, "folds");
	CHECK(r.nhost == 3 && r.ndoctor == 2, "three hosts answered, two with doctor output (%d, %d)", r.nhost, r.ndoctor);
	CHECK(group(&r, "error") && !strcmp(group(&r, "error")->range, "node02") && r.ngroup == 1,
	      "the error is node02's, the label's host, not the document's \"host\"");
	CHECK_STR(r.clean_range, "node01", "node01 is clean");
	CHECK(r.nbad == 1 && r.bad[0].line == 2 * 16 + 1 && r.bad[0].host && !strcmp(r.bad[0].host, "node03") &&
	      strstr(r.bad[0].why, "not JSON"), "the ssh error is malformed: node03, line %d (%s)", r.nbad ? r.bad[0].line : 0,
	      r.nbad ? r.bad[0].why : "");
	CHECK(r.nmissing == 1 && !strcmp(r.missing_range, "node04"), "node04 sent nothing");
	CHECK(r.exit_code == 2, "an error finding: exit 2 (%d)", r.exit_code);
	gp_report_free(&r);
}

/* Plain JSON lines carrying "host", srun --label task numbers, a truncated line, a closing record. */
static void test_plain_and_truncated(void)
{
	char a[2048], b[2048], c[2048], in[8192];
	struct gp_report r;
	struct gp_err e = { 0 };

	doctor_doc(a, sizeof(a), "gpu7", "warning", "nvidia", 0);
	doctor_doc(b, sizeof(b), "gpu8", "warning", "nvidia", 0);
	doctor_doc(c, sizeof(c), "gpu9", "ok", "nvidia", 0);
	c[60] = '\0'; /* cut inside the document, as a full disk or a killed pdsh does */
	snprintf(in, sizeof(in), "%s 0: %s%s\n  1: {\"exit_status\": 0}\n", a, b, c);
	gp_report_init(&r);
	CHECK(read_text(&r, in, NULL) == 0, "plain and srun-labelled lines read");
	CHECK(gp_report_fold(&r, 0.9, &e) == 0, "folds");
	CHECK(group(&r, "warning") && !strcmp(group(&r, "warning")->range, "gpu[7-8]") &&
	      group(&r, "warning")->nhost == 2, "warnings folded: gpu[7-8], the hosts the documents name");
	CHECK(r.nbad == 1 && r.bad[0].line == 3 && r.bad[0].host && !strcmp(r.bad[0].host, "gpu9") &&
	      strstr(r.bad[0].why, "truncated"), "the cut line: line 3, host gpu9 from its text, truncated (%s)",
	      r.nbad ? r.bad[0].why : "");
	CHECK(r.nclean == 0 && r.exit_code == 1, "no clean host, exit 1 (%d)", r.exit_code);
	gp_report_free(&r);

	/* a pretty document cut short and followed by the next one at column 0 */
	doctor_doc(a, sizeof(a), "n1", "ok", "x", 1);
	doctor_doc(b, sizeof(b), "n2", "ok", "x", 1);
	a[strlen(a) / 2] = '\0';
	snprintf(in, sizeof(in), "%s\n%s", a, b);
	gp_report_init(&r);
	read_text(&r, in, NULL);
	gp_report_fold(&r, 0.9, &e);
	CHECK(r.nbad == 1 && r.bad[0].line == 1 && strstr(r.bad[0].why, "not closed before line") &&
	      r.nclean == 1 && !strcmp(r.clean_range, "n2"), "a cut pretty document does not swallow the next one (%s)",
	      r.nbad ? r.bad[0].why : "");
	gp_report_free(&r);
}

static void bench_line(char *buf, size_t n, const char *host, const char *path, double gbps)
{
	snprintf(buf, n, "%s: {\"schema\":1,\"mode\":\"p2p\",\"path\":\"%s\",\"src\":\"GPU0\",\"dst\":\"GPU1\","
		 "\"memory\":null,\"p2p\":\"on\",\"op\":\"write\",\"engine\":\"ce\",\"size\":268435456,\"gbps\":%.2f,"
		 "\"us\":5.0,\"skipped\":null}\n", host, path, gbps);
}

/* Hosts m(from+1)..m(to) with the figures 50 50 50 45.0 44.99 (by host number), folded at 0.9 into *r. */
static void fold_m(struct gp_report *r, int from, int to)
{
	static const double w[] = { 50, 50, 50, 45.0, 44.99 };
	char in[4096], line[512];
	struct gp_err e = { 0 };
	size_t k = 0;

	for (int i = from; i < to; i++) {
		char h[16];

		snprintf(h, sizeof(h), "m%d", i + 1);
		bench_line(line, sizeof(line), h, "p2p", w[i]);
		k += (size_t)snprintf(in + k, sizeof(in) - k, "%s", line);
	}
	gp_report_init(r);
	read_text(r, in, NULL);
	gp_report_fold(r, 0.9, &e);
}

/* Bench: the fleet median per figure, hosts below a fraction of it; a host's last record counts. */
static void test_bench(void)
{
	static const double v[] = { 50, 52, 48, 51, 49, 44.0, 45.5 };
	char in[8192], line[512];
	struct gp_report r;
	struct gp_err e = { 0 };
	size_t k = 0;

	for (int i = 0; i < 7; i++) {
		char h[16];

		snprintf(h, sizeof(h), "n%d", i + 1);
		bench_line(line, sizeof(line), h, "p2p", i == 6 ? 10.0 : v[i]); /* n7 first slow ... */
		k += (size_t)snprintf(in + k, sizeof(in) - k, "%s", line);
	}
	bench_line(line, sizeof(line), "n7", "p2p", v[6]); /* ... then its second run, which counts */
	k += (size_t)snprintf(in + k, sizeof(in) - k, "%s", line);
	snprintf(in + k, sizeof(in) - k,
		 "n1: {\"schema\":1,\"mode\":\"latency\",\"path\":\"p2p\",\"gbps\":null,\"us\":2.5}\n");
	gp_report_init(&r);
	read_text(&r, in, NULL);
	CHECK(gp_report_fold(&r, 0.9, &e) == 0, "folds");
	/* sorted: 44 45.5 48 49 50 51 52 -> median 49; 0.9 x 49 = 44.1: only n6 (44.0) is below */
	CHECK(r.nbench == 1 && r.bench[0].nv == 7, "one figure (latency rows have no GB/s), seven hosts (%d)",
	      r.nbench ? r.bench[0].nv : 0);
	CHECK(r.nbench == 1 && r.bench[0].median == 49.0, "median 49 GB/s");
	CHECK(r.nbench == 1 && r.bench[0].nlow == 1 && !strcmp(r.host[r.bench[0].low[0].host].name, "n6"),
	      "n6 (44.0 < 44.1) is below; n7's first run (10.0) was replaced by its second (45.5)");
	CHECK(r.exit_code == 1, "a figure below: exit 1");
	gp_report_free(&r);
	gp_report_init(&r);
	read_text(&r, in, NULL);
	gp_report_fold(&r, 0.5, &e);
	CHECK(r.nbench == 1 && r.bench[0].nlow == 0 && r.exit_code == 0 && r.nclean == 0,
	      "--below 0.5: none below, exit 0 (bench only: no host is listed clean)");
	gp_report_free(&r);

	/* the bound: exactly 0.9 x the median (0.9 * 50.0 == 45.0 in binary too) is not below it */
	fold_m(&r, 0, 5);
	CHECK(r.nbench == 1 && r.bench[0].median == 50.0 && r.bench[0].nlow == 1 &&
	      !strcmp(r.host[r.bench[0].low[0].host].name, "m5"), "45.0 = 0.9 x 50 is not below; 44.99 is");
	gp_report_free(&r);
	/* an even count (m2..m5): the mean of the two middle figures, (45 + 50) / 2 */
	fold_m(&r, 1, 5);
	CHECK(r.nbench == 1 && r.bench[0].nv == 4 && r.bench[0].median == (45.0 + 50.0) / 2,
	      "four hosts (50 50 45 44.99): median 47.5 (%.3f)", r.nbench ? r.bench[0].median : -1);
	gp_report_free(&r);
}

/* The totals of a folded report: folded findings and findings on hosts per severity, figures below. */
static void test_totals(void)
{
	static const struct { const char *host, *sev, *subject; } doc[] = {
		{ "d1", "error", "0000:01:00.0" }, { "d2", "error", "0000:01:00.0" }, { "d3", "warning", "0000:02:00.0" },
		{ "d4", "warning", "0000:03:00.0" }, { "d5", "unknown", "0000:04:00.0" }, { "d6", "ok", "0000:01:00.0" },
	};
	/* p2p: median 50, under 45 are 40 and 30; h2d: median 20, under 18 is 10 */
	static const struct { const char *host, *path; double gbps; } fig[] = {
		{ "b1", "p2p", 50 }, { "b2", "p2p", 50 }, { "b3", "p2p", 50 }, { "b4", "p2p", 40 }, { "b5", "p2p", 30 },
		{ "b1", "h2d", 20 }, { "b2", "h2d", 20 }, { "b3", "h2d", 10 },
	};
	char in[16384], one[2048], line[2048];
	struct gp_report_totals t;
	struct gp_report r;
	struct gp_err e = { 0 };
	size_t k = 0;

	for (size_t i = 0; i < sizeof(doc) / sizeof(doc[0]); i++) {
		doctor_doc(one, sizeof(one), doc[i].host, doc[i].sev, doc[i].subject, 0);
		labelled(line, sizeof(line), doc[i].host, one);
		k += (size_t)snprintf(in + k, sizeof(in) - k, "%s", line);
	}
	for (size_t i = 0; i < sizeof(fig) / sizeof(fig[0]); i++) {
		bench_line(line, sizeof(line), fig[i].host, fig[i].path, fig[i].gbps);
		k += (size_t)snprintf(in + k, sizeof(in) - k, "%s", line);
	}
	gp_report_init(&r);
	read_text(&r, in, NULL);
	CHECK(gp_report_fold(&r, 0.9, &e) == 0, "totals: folds");
	gp_report_totals(&r, &t);
	CHECK(t.groups[0] == 1 && t.groups[1] == 2 && t.groups[2] == 1 && t.groups[3] == 0,
	      "folded: 1 error (d1 and d2), 2 warnings, 1 unknown, no info (%d %d %d %d)", t.groups[0], t.groups[1],
	      t.groups[2], t.groups[3]);
	CHECK(t.hosts[0] == 2 && t.hosts[1] == 2 && t.hosts[2] == 1 && t.hosts[3] == 0,
	      "on hosts: 2 errors, 2 warnings, 1 unknown (%d %d %d %d)", t.hosts[0], t.hosts[1], t.hosts[2], t.hosts[3]);
	CHECK(r.nbench == 2 && t.nlow == 3, "below: b4 and b5 on p2p, b3 on h2d: 3 of 2 figures (%d, %d)", t.nlow,
	      r.nbench);
	gp_report_free(&r);
	gp_report_init(&r);
	CHECK(gp_report_fold(&r, 0.9, &e) == 0, "an empty report folds");
	memset(&t, 0x55, sizeof(t));
	gp_report_totals(&r, &t);
	CHECK(t.groups[0] == 0 && t.hosts[1] == 0 && t.nlow == 0, "an empty report: all zero");
	gp_report_free(&r);
}

/* A directory as clush --outdir writes it: the file names are the hosts. */
static void test_dir(void)
{
	char dir[] = "/tmp/gp-report-XXXXXX", path[256], doc[2048];
	struct gp_report r;
	struct gp_err e = { 0 };
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	for (int i = 1; i <= 3; i++) {
		snprintf(path, sizeof(path), "%s/node%02d", dir, i);
		f = fopen(path, "w");
		doctor_doc(doc, sizeof(doc), "localhost", i == 2 ? "warning" : "ok", "s", i == 3);
		fputs(doc, f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/node04", dir);
	f = fopen(path, "w");
	fputs("{\"schema\":1,\"command\":\"doctor\",\"host\":null,\"findings\":[],\"error\":\"no GPU\",\"exit_status\":69}\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/node05", dir);
	fclose(fopen(path, "w")); /* the host printed nothing */
	gp_report_init(&r);
	CHECK(gp_report_read_path(&r, dir, &e) == 0, "a directory reads");
	snprintf(path, sizeof(path), "%s/absent", dir);
	CHECK(gp_report_read_path(&r, path, &e) == 0, "a missing file is no fatal error");
	gp_report_fold(&r, 0.9, &e);
	CHECK(r.nclean == 2 && !strcmp(r.clean_range, "node[01,03]"), "hosts named by the files: clean node[01,03] (%s)",
	      r.clean_range);
	CHECK(group(&r, "warning") && !strcmp(group(&r, "warning")->range, "node02"), "node02's warning");
	CHECK(r.nstatus == 1 && r.status[0].exit_status == 69 && !strcmp(r.status[0].range, "node04"),
	      "node04's doctor could not run (exit 69)");
	CHECK(r.nbad == 2 && r.bad[0].line == 0 && r.bad[0].host && !strcmp(r.bad[0].host, "node05") &&
	      strstr(r.bad[0].why, "empty"), "node05's empty file is malformed input (%s)", r.nbad ? r.bad[0].why : "");
	CHECK(r.nbad == 2 && r.bad[1].line == 0 && strstr(r.bad[1].why, "cannot open"), "the missing file is malformed input");
	gp_report_free(&r);
	for (int i = 1; i <= 5; i++) {
		snprintf(path, sizeof(path), "%s/node%02d", dir, i);
		unlink(path);
	}
	/* the files are read in host order (n2 n9 n10), not in strcmp's (n10 n2 n9) nor the directory's */
	for (int i = 0; i < 3; i++) {
		static const char *const name[] = { "n10", "n9", "n2" };

		snprintf(path, sizeof(path), "%s/%s", dir, name[i]);
		f = fopen(path, "w");
		doctor_doc(doc, sizeof(doc), "localhost", "ok", "s", 0);
		fputs(doc, f);
		fclose(f);
	}
	gp_report_init(&r);
	CHECK(gp_report_read_path(&r, dir, &e) == 0 && r.nhost == 3 && !strcmp(r.host[0].name, "n2") &&
	      !strcmp(r.host[1].name, "n9") && !strcmp(r.host[2].name, "n10"), "read in host order: %s %s %s",
	      r.nhost > 0 ? r.host[0].name : "", r.nhost > 1 ? r.host[1].name : "", r.nhost > 2 ? r.host[2].name : "");
	gp_report_free(&r);
	for (int i = 0; i < 3; i++) {
		static const char *const name[] = { "n10", "n9", "n2" };

		snprintf(path, sizeof(path), "%s/%s", dir, name[i]);
		unlink(path);
	}
	rmdir(dir);
}

static void test_clean_and_expect_errors(void)
{
	char a[2048];
	struct gp_report r;
	struct gp_err e = { 0 };

	doctor_doc(a, sizeof(a), "n1", "ok", "x", 0);
	gp_report_init(&r);
	read_text(&r, a, NULL);
	gp_report_fold(&r, 0.9, &e);
	CHECK(r.exit_code == 0 && r.nclean == 1 && r.nbad == 0, "one clean host: exit 0");
	gp_report_free(&r);
	gp_report_init(&r);
	read_text(&r, "", NULL);
	gp_report_fold(&r, 0.9, &e);
	CHECK(r.exit_code == 1 && r.nhost == 0, "nothing read: exit 1, not a clean fleet");
	gp_report_free(&r);
	/* doctor could not run on ten hosts, each for its own reason: ten lines, none dropped */
	{
		char in[4096];
		size_t k = 0;
		int n = 0;

		for (int i = 0; i < 10; i++)
			k += (size_t)snprintf(in + k, sizeof(in) - k, "h%d: {\"command\":\"doctor\",\"host\":null,"
					      "\"findings\":[],\"error\":\"reason %d\",\"exit_status\":%d}\n", i, i,
					      i % 2 ? 69 : 3);
		gp_report_init(&r);
		read_text(&r, in, NULL);
		gp_report_fold(&r, 0.9, &e);
		for (int i = 0; i < r.nstatus; i++)
			n += r.status[i].nhost;
		CHECK(r.nstatus == 10 && n == 10 && r.status[0].exit_status == 3 && r.status[9].exit_status == 69 &&
		      r.status[0].error && !strcmp(r.status[0].error, "reason 0") && r.nclean == 0 && r.exit_code == 1,
		      "ten hosts that could not run, by status then reason: ten lines (%d), exit 1", r.nstatus);
		gp_report_free(&r);
	}
	gp_report_init(&r);
	CHECK(gp_report_expect(&r, "node[3-1]", &e) == -EINVAL && e.cls == GP_E_USAGE, "a bad --expect: usage (%s)", e.msg);
	gp_report_free(&r);
}

/* A bench row whose strings pass 1 KiB together (the row key once lived in char[1024] and overflowed):
 * fields up to 256 bytes fold, a longer one is malformed input, nothing is written past a buffer. */
static void test_bench_long_fields(void)
{
	char f[8][600], row[8192];
	struct gp_report r;
	struct gp_err e = { 0 };

	for (int n = 0; n < 2; n++) {
		size_t len = n ? 257 : 256;

		for (int i = 0; i < 8; i++) {
			memset(f[i], 'a' + i, len);
			f[i][len] = '\0';
		}
		snprintf(row, sizeof(row), "{\"host\":\"n1\",\"mode\":\"%s\",\"path\":\"%s\",\"src\":\"%s\","
			 "\"dst\":\"%s\",\"memory\":\"%s\",\"p2p\":\"%s\",\"op\":\"%s\",\"engine\":\"%s\","
			 "\"size\":1024,\"gbps\":5}\n", f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
		gp_report_init(&r);
		CHECK(read_text(&r, row, NULL) == 0 && gp_report_fold(&r, 0.9, &e) == 0, "a %zu-byte field row reads", len);
		if (!n)
			CHECK(r.nbench == 1 && r.nbad == 0 && strlen(r.bench[0].engine) == 256 && r.bench[0].engine[0] == 'h',
			      "eight 256-byte fields (2 KiB of key): one figure (%d figures, %d malformed)", r.nbench, r.nbad);
		else
			CHECK(r.nbench == 0 && r.nbad == 1 && strstr(r.bad[0].why, "\"mode\" longer than 256 bytes") &&
			      r.bad[0].host && !strcmp(r.bad[0].host, "n1"), "a 257-byte field: malformed, named (%s)",
			      r.nbad ? r.bad[0].why : "");
		gp_report_free(&r);
	}
}

/* Numbers another host sent are checked before use: an exit status outside 0..255 (1e300 once became
 * INT_MIN and the host clean), a size of 1e30 (once printed as 0), a GB/s that is no figure. */
static void test_numbers(void)
{
	static const struct { const char *doc, *why; } bad[] = {
		{ "{\"host\":\"d1\",\"findings\":[],\"exit_status\":1e300}", "\"exit_status\" is no exit status" },
		{ "{\"host\":\"d2\",\"findings\":[],\"exit_status\":-1}", "\"exit_status\" is no exit status" },
		{ "{\"host\":\"d3\",\"findings\":[],\"exit_status\":2.5}", "\"exit_status\" is no exit status" },
		{ "{\"host\":\"d4\",\"findings\":[],\"exit_status\":\"0\"}", "\"exit_status\" is no exit status" },
		{ "{\"host\":\"d5\",\"findings\":[],\"exit_status\":1e999}", "\"exit_status\" is no exit status" },
		{ "{\"host\":\"b1\",\"mode\":\"p2p\",\"size\":1e30,\"gbps\":1}", "\"size\" is no size" },
		{ "{\"host\":\"b2\",\"mode\":\"p2p\",\"size\":-4096,\"gbps\":1}", "\"size\" is no size" },
		{ "{\"host\":\"b3\",\"mode\":\"p2p\",\"size\":18446744073709551616,\"gbps\":1}", "\"size\" is no size" },
		{ "{\"host\":\"b4\",\"mode\":\"p2p\",\"size\":4096,\"gbps\":1e999}", "\"gbps\" is no figure" },
		{ "{\"host\":\"b5\",\"mode\":\"p2p\",\"size\":4096,\"gbps\":-1e999}", "\"gbps\" is no figure" },
		{ "{\"host\":\"b6\",\"mode\":\"p2p\",\"size\":4096,\"gbps\":-2}", "\"gbps\" is no figure" },
	};
	struct gp_report r;
	struct gp_err e = { 0 };
	char in[4096];
	size_t k = 0;
	int ok = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		k += (size_t)snprintf(in + k, sizeof(in) - k, "%s\n", bad[i].doc);
	snprintf(in + k, sizeof(in) - k, "{\"host\":\"g1\",\"findings\":[],\"exit_status\":255}\n"
		 "{\"host\":\"g2\",\"mode\":\"p2p\",\"size\":9223372036854775808,\"gbps\":0}\n");
	gp_report_init(&r);
	CHECK(read_text(&r, in, NULL) == 0 && gp_report_fold(&r, 0.9, &e) == 0, "numbers: reads and folds");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok += (int)i < r.nbad && r.bad[i].line == (int)i + 1 && strstr(r.bad[i].why, bad[i].why) != NULL;
	CHECK(r.nbad == (int)(sizeof(bad) / sizeof(bad[0])) && ok == r.nbad, "each bad number is malformed input, "
	      "said why (%d of %d)", ok, r.nbad);
	CHECK(r.nclean == 0 && r.nstatus == 1 && r.status[0].exit_status == 255 && r.ndoctor == 1,
	      "no host clean; g1's 255 is a status that is no finding (%d clean, %d doctor)", r.nclean, r.ndoctor);
	CHECK(r.nbench == 1 && r.bench[0].size == 9223372036854775808ull && r.bench[0].nv == 1,
	      "2^63 bytes is a size (the one figure, g2's)");
	CHECK(r.exit_code == 1, "malformed numbers: exit 1 (%d)", r.exit_code);
	gp_report_free(&r);
}

/* Findings fold on (id, severity, subject, message) exactly: a field holding the old separator (\x1f)
 * or a NUL cannot make two different findings one, nor null one with "". */
static void test_group_key(void)
{
	static const char *const f[] = {
		"{\"id\":\"a\",\"severity\":\"error\",\"subject\":\"s\\u001fm\",\"message\":\"x\"}",
		"{\"id\":\"a\",\"severity\":\"error\",\"subject\":\"s\",\"message\":\"m\\u001fx\"}",
		"{\"id\":\"a\",\"severity\":\"error\",\"subject\":\"s\\u001fm\\u001fx\",\"message\":\"\"}",
		"{\"id\":\"a\",\"severity\":\"error\",\"subject\":\"s\\u001fm\\u001fx\",\"message\":null}",
		"{\"id\":\"a\",\"severity\":\"error\",\"subject\":\"s\\u001fm\\u001fx\"}",
	};
	struct gp_report r;
	struct gp_err e = { 0 };
	char in[2048];
	size_t k = 0;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		k += (size_t)snprintf(in + k, sizeof(in) - k, "h%zu: {\"findings\":[%s],\"exit_status\":2}\n", i + 1, f[i]);
	/* bench: a path holding the separator and a src, against the two split the other way */
	snprintf(in + k, sizeof(in) - k,
		 "b1: {\"mode\":\"p2p\",\"path\":\"x\\u001fy\",\"src\":\"z\",\"size\":1,\"gbps\":1}\n"
		 "b2: {\"mode\":\"p2p\",\"path\":\"x\",\"src\":\"y\\u001fz\",\"size\":1,\"gbps\":1}\n"
		 "b3: {\"findings\":[{\"id\":\"a\",\"severity\":\"error\",\"subject\":\"s\\u0000m\"}],\"exit_status\":2}\n");
	gp_report_init(&r);
	CHECK(read_text(&r, in, NULL) == 0 && gp_report_fold(&r, 0.9, &e) == 0, "group keys: reads and folds");
	CHECK(r.ngroup == 4, "four different findings stay four groups; null and absent messages are one (%d)", r.ngroup);
	for (int i = 0; i < r.ngroup; i++)
		CHECK(r.group[i].nhost == (r.group[i].message ? 1 : 2), "group %d: %d host(s)", i, r.group[i].nhost);
	CHECK(r.nbench == 2, "bench: x\\x1fy/z and x/y\\x1fz are two figures (%d)", r.nbench);
	CHECK(r.nbad == 1 && r.bad[0].host && !strcmp(r.bad[0].host, "b3") && strstr(r.bad[0].why, "\\u0000"),
	      "a subject holding \\u0000 is malformed, not cut short (%s)", r.nbad ? r.bad[0].why : "");
	gp_report_free(&r);
}

int main(void)
{
	test_group_key();
	test_numbers();
	test_interleaved();
	test_plain_and_truncated();
	test_bench();
	test_bench_long_fields();
	test_totals();
	test_dir();
	test_clean_and_expect_errors();
	return unit_done();
}
