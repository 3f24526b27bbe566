/* Unit tests: host lists (expand and fold as Slurm and dshbak -c do), the JSON reader, the string map. */
#include <errno.h>

#include "gpup2p/hostlist.h"
#include "gpup2p/jsonr.h"
#include "gpup2p/strmap.h"
#include "unit.h"

/* Expand expr and join the names with spaces (or "ERR:<class>" on an error). */
static const char *expand(const char *expr)
{
	static char out[4096];
	struct gp_hostlist h = { 0 };
	struct gp_err e = { 0 };
	size_t n = 0;

	out[0] = '\0';
	if (gp_hostlist_parse(&h, expr, &e)) {
		snprintf(out, sizeof(out), "ERR:%d", e.cls);
		gp_hostlist_free(&h);
		return out;
	}
	for (int i = 0; i < h.n && n < sizeof(out); i++)
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", i ? " " : "", h.v[i]);
	gp_hostlist_free(&h);
	return out;
}

/* Fold the space-separated names. */
static const char *fold(const char *names)
{
	static char out[4096];
	char buf[4096], *v[256], *save = NULL;
	int n = 0;
	char *s;

	snprintf(buf, sizeof(buf), "%s", names);
	for (char *t = strtok_r(buf, " ", &save); t && n < 256; t = strtok_r(NULL, " ", &save))
		v[n++] = t;
	s = gp_hostlist_format(v, n);
	snprintf(out, sizeof(out), "%s", s ? s : "(null)");
	free(s);
	return out;
}

static void test_expand(void)
{
	CHECK_STR(expand("node[01-04]"), "node01 node02 node03 node04", "zero padding kept");
	CHECK_STR(expand("node[8-11]"), "node8 node9 node10 node11", "no padding: widths grow");
	CHECK_STR(expand("node[08-11]"), "node08 node09 node10 node11", "padding to the lower bound's width");
	CHECK_STR(expand("node[098-101]"), "node098 node099 node100 node101", "padded three wide");
	CHECK_STR(expand("n[1-2,5,7-8]"), "n1 n2 n5 n7 n8", "several ranges in one bracket");
	CHECK_STR(expand("node[01-02]-ib,login1"), "node01-ib node02-ib login1", "a suffix, and a plain name");
	CHECK_STR(expand("rack[1-2]-n[1-2]"), "rack1-n1 rack1-n2 rack2-n1 rack2-n2", "two brackets: every pair");
	CHECK_STR(expand("a[1-2],b[3-4]"), "a1 a2 b3 b4", "several prefixes");
	CHECK_STR(expand("gpu.example.com"), "gpu.example.com", "a dotted name");
	CHECK_STR(expand("n[0]"), "n0", "one number in brackets");
	CHECK_STR(expand("n[5-3]"), "ERR:3", "a range that runs backwards is a usage error");
	CHECK_STR(expand("n[1-3"), "ERR:3", "'[' without ']'");
	CHECK_STR(expand("n1-3]"), "ERR:3", "']' without '['");
	CHECK_STR(expand("n[[1]]"), "ERR:3", "nested brackets");
	CHECK_STR(expand("n[]"), "ERR:3", "empty brackets");
	CHECK_STR(expand("n[1-3,]"), "ERR:3", "a comma with no range after it");
	CHECK_STR(expand("n[a-b]"), "ERR:3", "letters in a range");
	CHECK_STR(expand("a,,b"), "ERR:3", "an empty name between commas");
	CHECK_STR(expand(""), "ERR:3", "an empty list");
	CHECK_STR(expand("node 1"), "ERR:3", "a space is no host name character");
	CHECK_STR(expand("n[1-2000000]"), "ERR:3", "more than GP_HOSTLIST_MAX hosts");
	CHECK_STR(expand("n[1234567890123456789]"), "ERR:3", "a number of 19 digits");
}

static void test_fold(void)
{
	CHECK_STR(fold("node03 node01 node02 node14 node05"), "node[01-03,05,14]", "padded ranges, sorted");
	CHECK_STR(fold("node10 node9 node8 node2"), "node[2,8-10]", "numeric order, not text order");
	CHECK_STR(fold("node08 node09 node10"), "node[08-10]", "a padded range runs into a full-width number");
	CHECK_STR(fold("node8 node09 node10"), "node[8,09-10]", "padded and unpadded do not share a range");
	CHECK_STR(fold("node1 node01"), "node[1,01]", "node1 and node01 are two hosts");
	CHECK_STR(fold("node01-ib node02-ib node01 node03"), "node[01,03],node[01-02]-ib", "suffixes fold apart");
	CHECK_STR(fold("gpu2 login cpu1 gpu1"), "cpu1,gpu[1-2],login", "several prefixes and a name with no digits");
	CHECK_STR(fold("node05"), "node05", "one host: no brackets");
	CHECK_STR(fold("node5 node5 node6"), "node[5-6]", "repeats dropped");
	CHECK_STR(fold(""), "", "no hosts: an empty string");
	CHECK_STR(fold("rack1-n1 rack1-n2 rack2-n1"), "rack1-n[1-2],rack2-n1", "the last number is the range");
	CHECK_STR(fold("n99 n100 n101"), "n[99-101]", "widths grow within an unpadded range");
	/* round trip: what fold writes, expand reads back as the same names */
	CHECK_STR(expand(fold("x007 x008 x010 y1 y2-ib y3-ib z")), "x007 x008 x010 y1 y2-ib y3-ib z",
		  "fold then expand gives the names back");
	CHECK(gp_hostlist_cmp("node2", "node10") < 0 && gp_hostlist_cmp("node10", "node2") > 0 &&
	      gp_hostlist_cmp("a1", "b0") < 0 && gp_hostlist_cmp("n1", "n1") == 0, "host order compares numbers as numbers");
}

static void test_uniq(void)
{
	struct gp_hostlist h = { 0 };
	struct gp_err e = { 0 };

	gp_hostlist_parse(&h, "n[3,1,2],n1,n10", &e);
	gp_hostlist_uniq(&h);
	CHECK(h.n == 4 && !strcmp(h.v[0], "n1") && !strcmp(h.v[1], "n2") && !strcmp(h.v[3], "n10"),
	      "uniq sorts in host order and drops the repeated n1 (%d names)", h.n);
	gp_hostlist_free(&h);
}

static int parses(const char *s, char *why, size_t n)
{
	struct gp_jdoc d;
	int rc = gp_jdoc_parse(&d, s, strlen(s), why, n);

	if (!rc)
		gp_jdoc_free(&d);
	return rc;
}

static void test_json(void)
{
	const char *doc = "{\"a\": [1, -2.5e1, true, null], \"s\": \"x\\\"\\u00e9\\ud83d\\ude00\\n\", \"o\": {}}";
	struct gp_jdoc d;
	char why[128];
	double v = 0;
	int rc = gp_jdoc_parse(&d, doc, strlen(doc), why, sizeof(why));
	const struct gp_jv *a;

	CHECK(rc == 0, "a valid document parses (%s)", why);
	if (rc)
		return;
	a = gp_jv_get(d.root, "a");
	CHECK(a && a->type == GP_JV_ARR && a->nkid == 4 && a->kid->n == 1 && a->kid->next->n == -25 &&
	      a->kid->next->next->type == GP_JV_BOOL && a->kid->next->next->next->type == GP_JV_NULL,
	      "array elements: numbers, a boolean, null");
	CHECK_STR(gp_jv_str(d.root, "s"), "x\"\xc3\xa9\xf0\x9f\x98\x80\n", "escapes, \\u and a surrogate pair to UTF-8");
	CHECK(gp_jv_get(d.root, "o") && gp_jv_get(d.root, "o")->nkid == 0, "an empty object");
	CHECK(!gp_jv_num(d.root, "s", &v) && !gp_jv_str(d.root, "nope"), "wrong type and absent member: none");
	gp_jdoc_free(&d);

	CHECK(parses("{\"a\": 1", why, sizeof(why)) == -EINVAL && strstr(why, "truncated"), "truncated: %s", why);
	CHECK(parses("{\"a\": \"b", why, sizeof(why)) == -EINVAL && strstr(why, "truncated"), "cut in a string: %s", why);
	CHECK(parses("{\"a\" 1}", why, sizeof(why)) == -EINVAL && strstr(why, "expected ':' at byte 5"), "%s", why);
	CHECK(parses("{\"a\": 1} x", why, sizeof(why)) == -EINVAL && strstr(why, "text after"), "%s", why);
	CHECK(parses("[01]", why, sizeof(why)) == -EINVAL, "a leading zero is no JSON number");
	CHECK(parses("{\"a\": tru}", why, sizeof(why)) == -EINVAL, "a misspelt literal");
	CHECK(parses("\"a\tb\"", why, sizeof(why)) == -EINVAL && strstr(why, "control"), "a raw tab in a string");
	CHECK(parses("", why, sizeof(why)) == -EINVAL, "nothing is no document");
	{
		char deep[201];

		memset(deep, '[', 100);
		memset(deep + 100, ']', 100);
		deep[200] = '\0';
		CHECK(parses(deep, why, sizeof(why)) == -EINVAL && strstr(deep, "[") && strstr(why, "deep"),
		      "nesting past 64 levels is refused: %s", why);
	}
}

static void test_strmap(void)
{
	struct gp_strmap m = { 0 };
	char k[32];
	int bad = 0;

	CHECK(gp_strmap_get(&m, "x") == -1, "an empty map has nothing");
	for (int i = 0; i < 1000; i++) {
		snprintf(k, sizeof(k), "node%04d", i);
		bad += gp_strmap_put(&m, k, i) != 0;
	}
	gp_strmap_put(&m, "node0007", 7007);
	for (int i = 0; i < 1000; i++) {
		snprintf(k, sizeof(k), "node%04d", i);
		bad += gp_strmap_get(&m, k) != (i == 7 ? 7007 : i);
	}
	CHECK(!bad && m.n == 1000 && gp_strmap_get(&m, "node1000") == -1 && gp_strmap_get(&m, "node") == -1,
	      "1000 keys through several growths, one replaced, absent keys -1 (%d wrong)", bad);
	gp_strmap_free(&m);
}

/* The host name rule --expect, the labels and report's "host" member share. */
static void test_valid(void)
{
	char long_name[GP_HOSTNAME_MAX + 2];

	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	CHECK(gp_hostlist_valid("node01") && gp_hostlist_valid("gpu-7.rack_2.example.com"), "host names are valid");
	CHECK(!gp_hostlist_valid("") && !gp_hostlist_valid("n1\x1b[2J") && !gp_hostlist_valid("a b") &&
	      !gp_hostlist_valid("n[1-2]") && !gp_hostlist_valid("n1\n") && !gp_hostlist_valid("caf\xc3\xa9") &&
	      !gp_hostlist_valid("a/b") && !gp_hostlist_valid("a:b"), "empty, ESC, space, brackets, LF, non-ASCII, / and : are not");
	CHECK(!gp_hostlist_valid(long_name), "%d characters are too many", GP_HOSTNAME_MAX + 1);
	long_name[GP_HOSTNAME_MAX] = '\0';
	CHECK(gp_hostlist_valid(long_name), "%d characters are a host name", GP_HOSTNAME_MAX);
}

int main(void)
{
	test_valid();
	test_strmap();
	test_expand();
	test_fold();
	test_uniq();
	test_json();
	return unit_done();
}
