/* Unit tests: what doctor's formats for machines take from libcore: which findings fit a size
 * bound (--json), the boot id and the GPUs' UUIDs (--json, --prometheus). */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/check.h"
#include "fx.h"
#include "gpup2p/root.h"

/* Findings of these severities (no text: gp_doctor_fit looks at severity and size only). */
static void list_of(struct gp_findings *l, struct gp_finding *v, const enum gp_sev *sev, int n)
{
	memset(l, 0, sizeof(*l));
	memset(v, 0, sizeof(*v) * (size_t)n);
	for (int i = 0; i < n; i++)
		v[i].sev = sev[i];
	l->v = v;
	l->n = n;
}

static const char *kept(const unsigned char *keep, int n)
{
	static char s[64];

	for (int i = 0; i < n; i++)
		s[i] = keep[i] ? '1' : '0';
	s[n] = '\0';
	return s;
}

static void fit(void)
{
	/* report order: ok, error, skipped, warning, info, unknown, ok */
	static const enum gp_sev sev[] = { GP_SEV_OK, GP_SEV_ERROR, GP_SEV_SKIPPED, GP_SEV_WARNING, GP_SEV_INFO,
					   GP_SEV_UNKNOWN, GP_SEV_OK };
	size_t size[7] = { 10, 10, 10, 10, 10, 10, 10 };
	struct gp_finding v[7];
	struct gp_findings l;
	unsigned char keep[7];
	int left;

	list_of(&l, v, sev, 7);
	left = gp_doctor_fit(&l, size, 70, keep);
	CHECK(left == 0 && !strcmp(kept(keep, 7), "1111111"), "everything fits: all kept (%d, %s)", left, kept(keep, 7));
	/* 40 bytes: error, warning, unknown, info (4 x 10) */
	left = gp_doctor_fit(&l, size, 40, keep);
	CHECK(left == 3 && !strcmp(kept(keep, 7), "0101110"), "40 bytes: error, warning, unknown, info (%d, %s)", left,
	      kept(keep, 7));
	left = gp_doctor_fit(&l, size, 39, keep);
	CHECK(left == 4 && !strcmp(kept(keep, 7), "0101010"), "39 bytes: the info is out too (%d, %s)", left, kept(keep, 7));
	/* a big error that does not fit: nothing less urgent slips in after it */
	size[1] = 100;
	left = gp_doctor_fit(&l, size, 60, keep);
	CHECK(left == 7 && !strcmp(kept(keep, 7), "0000000"), "the first error does not fit: nothing kept (%d, %s)", left,
	      kept(keep, 7));
	size[1] = 10;
	/* of two ok findings, report order decides */
	left = gp_doctor_fit(&l, size, 55, keep);
	CHECK(left == 2 && !strcmp(kept(keep, 7), "1101110"), "55 bytes: the first ok kept, the second and the skipped "
	      "not (%d, %s)", left, kept(keep, 7));
	left = gp_doctor_fit(&l, size, 0, keep);
	CHECK(left == 7 && !strcmp(kept(keep, 7), "0000000"), "no room: none (%d)", left);
}

/* A document as gp_doctor_fit_doc sees it: base bytes, each kept finding size[i] + extra (extra > 0:
 * the sizes it was given are too small), and the count left out in decimal. */
struct fake_doc {
	size_t base, size[8], extra;
	int n, calls, fail_size;
	char last[9];            /* the keep of the last render: "all", or one 0/1 per finding */
};

static char *fake_render(void *arg, const unsigned char *keep, int left, size_t *len)
{
	struct fake_doc *d = arg;
	char digits[16];
	char *buf;

	*len = d->base + (size_t)snprintf(digits, sizeof(digits), "%d", left);
	for (int i = 0; i < d->n; i++)
		if (!keep || keep[i])
			*len += d->size[i] + d->extra;
	snprintf(d->last, sizeof(d->last), "all");
	if (keep)
		snprintf(d->last, sizeof(d->last), "%s", kept(keep, d->n));
	d->calls++;
	if (!(buf = malloc(*len)))
		return NULL;
	memset(buf, 'x', *len);
	return buf;
}

static size_t fake_size(void *arg, int i)
{
	struct fake_doc *d = arg;

	return d->fail_size ? 0 : d->size[i];
}

static void fit_doc(void)
{
	static const enum gp_sev sev[] = { GP_SEV_OK, GP_SEV_ERROR, GP_SEV_WARNING };
	struct fake_doc d = { .base = 20, .size = { 10, 10, 10 }, .n = 3 };
	struct gp_doctor_render how = { fake_render, fake_size, &d };
	struct gp_finding v[3];
	struct gp_findings l;
	size_t len;
	int left;
	char *doc;

	list_of(&l, v, sev, 3);
	/* 20 + 3 x 10 + "0" = 51 bytes: under 100, whole, rendered once */
	doc = gp_doctor_fit_doc(&l, 100, &how, &len, &left);
	CHECK(doc && len == 51 && left == 0 && d.calls == 1 && !strcmp(d.last, "all"),
	      "51 bytes under 100: whole (%zu bytes, %d left, %d renders, %s)", len, left, d.calls, d.last);
	free(doc);
	/* under 45: without findings 20 + "3" = 21, a budget of 24: the error and the warning (20),
	 * 20 + 20 + "1" = 41 */
	d.calls = 0;
	doc = gp_doctor_fit_doc(&l, 45, &how, &len, &left);
	CHECK(doc && len == 41 && left == 1 && !strcmp(d.last, "011"),
	      "under 45: the error and the warning, 41 bytes (%zu, %d left, %s)", len, left, d.last);
	free(doc);
	/* the sizes are 3 bytes short each: error + warning render 20 + 26 + "1" = 47, 3 too many; the
	 * budget shrinks by 3 (21: both still fit, 47 again), by 3 more (18): the error alone,
	 * 20 + 13 + "2" = 34 */
	d.extra = 3;
	d.calls = 0;
	doc = gp_doctor_fit_doc(&l, 45, &how, &len, &left);
	CHECK(doc && len == 34 && left == 2 && !strcmp(d.last, "010"),
	      "sizes too small: the budget shrinks until it fits, the error alone (%zu, %d left, %s)", len, left, d.last);
	CHECK(d.calls == 5, "... in 5 renders: whole, none, 24, 21, 18 bytes of budget (%d)", d.calls);
	free(doc);
	d.extra = 0;
	/* not even the document without findings fits (21 >= 20): none kept, all counted */
	doc = gp_doctor_fit_doc(&l, 20, &how, &len, &left);
	CHECK(doc && len == 21 && left == 3 && !strcmp(d.last, "000"), "no room at all: none kept, 3 left (%zu, %d, %s)",
	      len, left, d.last);
	free(doc);
	/* the error alone (10) is bigger than the room (24): nothing less urgent slips in */
	d.size[1] = 30;
	doc = gp_doctor_fit_doc(&l, 45, &how, &len, &left);
	CHECK(doc && len == 21 && left == 3 && !strcmp(d.last, "000"), "the error does not fit: none kept (%zu, %d, %s)",
	      len, left, d.last);
	free(doc);
	d.size[1] = 10;
	d.fail_size = 1;
	doc = gp_doctor_fit_doc(&l, 45, &how, &len, &left);
	CHECK(!doc, "a finding's size out of memory: NULL");
	free(doc);
	/* no findings: whole, however long */
	l.n = 0;
	d.n = 0;
	doc = gp_doctor_fit_doc(&l, 10, &how, &len, &left);
	CHECK(doc && len == 21 && left == 0 && !strcmp(d.last, "all"), "no findings: whole (%zu, %s)", len, d.last);
	free(doc);
}

static void first_alarm(void)
{
	enum gp_sev sev[] = { GP_SEV_OK, GP_SEV_UNKNOWN, GP_SEV_WARNING, GP_SEV_INFO, GP_SEV_WARNING, GP_SEV_ERROR };
	struct gp_finding v[6];
	struct gp_findings l;

	list_of(&l, v, sev, 6);
	CHECK(gp_doctor_first_alarm(&l) == 5, "an error, last in report order, sets the state: 5 (%d)",
	      gp_doctor_first_alarm(&l));
	v[5].sev = GP_SEV_OK;
	CHECK(gp_doctor_first_alarm(&l) == 2, "no error: the first of two warnings (%d)", gp_doctor_first_alarm(&l));
	v[2].sev = v[4].sev = GP_SEV_SKIPPED;
	CHECK(gp_doctor_first_alarm(&l) == 1, "only an unknown: it (%d)", gp_doctor_first_alarm(&l));
	v[1].sev = GP_SEV_INFO;
	CHECK(gp_doctor_first_alarm(&l) == -1, "ok, info and skipped only: none (%d)", gp_doctor_first_alarm(&l));
}

/* gp_doctor_nagios's line for r into buf. Returns the code. */
static int nagios_line(const struct gp_doctor_nagios_run *r, char *buf, size_t n)
{
	FILE *f = fmemopen(buf, n, "w");
	int code;

	if (!f)
		return -1;
	code = gp_doctor_nagios(f, r);
	fclose(f);
	return code;
}

static void nagios(void)
{
	static const struct gp_doctor_check bar = { .id = "bar.small" }, drv = { .id = "driver.flavor" };
	static const enum gp_sev sev[] = { GP_SEV_WARNING, GP_SEV_OK, GP_SEV_ERROR };
	struct gp_doctor_nagios_run r = { .rc = 2, .why = "out of memory", .seconds = 0.5 };
	struct gp_finding v[3];
	struct gp_findings l;
	char buf[512];
	int sum[GP_SEV_N], code;

	/* a failed run (gp_doctor_run out of memory: exit 2) has no findings and no summary */
	code = nagios_line(&r, buf, sizeof(buf));
	CHECK(code == 2, "a failed run with exit 2: CRITICAL (%d)", code);
	CHECK_STR(buf, "GPUP2P CRITICAL - out of memory | duration=0.500s;;;0\n", "a failed run: why, no counts");
	r.why = "";
	r.host = "dgx01";
	nagios_line(&r, buf, sizeof(buf));
	CHECK_STR(buf, "GPUP2P CRITICAL - dgx01: doctor exited 2 | duration=0.500s;;;0\n", "a failed run, no message");
	r.rc = 64;
	r.why = "doctor: unknown option '--bogus'";
	code = nagios_line(&r, buf, sizeof(buf));
	CHECK(code == 3, "usage (64): UNKNOWN (%d)", code);
	CHECK_STR(buf, "GPUP2P UNKNOWN - dgx01: doctor: unknown option '--bogus' | duration=0.500s;;;0\n", "usage: why");

	list_of(&l, v, sev, 3);
	v[0].check = &drv, v[0].subject = "nvidia", v[0].message = "legacy";
	v[1].check = &drv, v[1].subject = "nvidia", v[1].message = "fine";
	v[2].check = &bar, v[2].subject = "0000:13:00.0", v[2].message = "aperture | small\n";
	gp_doctor_summary(&l, sum);
	r = (struct gp_doctor_nagios_run){ .out = &l, .sum = sum, .rc = 2, .host = "dgx01", .seconds = 1.25 };
	code = nagios_line(&r, buf, sizeof(buf));
	CHECK(code == 2, "an error: CRITICAL (%d)", code);
	CHECK_STR(buf, "GPUP2P CRITICAL - dgx01: 1 error, 1 warning, 0 unknown, 0 info, 1 ok, 0 skipped - bar.small "
		  "0000:13:00.0: aperture / small  | errors=1;;0;0 warnings=1;0;;0 unknown=0;;;0 info=0;;;0 ok=1;;;0 "
		  "skipped=0;;;0 duration=1.250s;;;0\n", "an error: the counts, the error ('|' and newline replaced), perfdata");
	v[2].sev = GP_SEV_OK;
	gp_doctor_summary(&l, sum);
	r.rc = 1;
	code = nagios_line(&r, buf, sizeof(buf));
	CHECK(code == 1, "a warning: WARNING (%d)", code);
	CHECK_STR(buf, "GPUP2P WARNING - dgx01: 0 errors, 1 warning, 0 unknown, 0 info, 2 ok, 0 skipped - driver.flavor "
		  "nvidia: legacy | errors=0;;0;0 warnings=1;0;;0 unknown=0;;;0 info=0;;;0 ok=2;;;0 skipped=0;;;0 "
		  "duration=1.250s;;;0\n", "a warning: it is the alarm");
	r.rc = 0;
	v[0].sev = GP_SEV_UNKNOWN;
	gp_doctor_summary(&l, sum);
	nagios_line(&r, buf, sizeof(buf));
	CHECK_STR(buf, "GPUP2P OK - dgx01: 0 errors, 0 warnings, 1 unknown, 0 info, 2 ok, 0 skipped | errors=0;;0;0 "
		  "warnings=0;0;;0 unknown=1;;;0 info=0;;;0 ok=2;;;0 skipped=0;;;0 duration=1.250s;;;0\n",
		  "an unknown without --strict (exit 0): OK, no alarm named");
}

/* Write text to root/path (creating the folders). */
static int put(const char *root, const char *path, const char *text)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, path);
	*strrchr(p, '/') = '\0';
	if (gp_mkdir_p(p))
		return -1;
	snprintf(p, sizeof(p), "%s%s", root, path);
	if (!(f = fopen(p, "w")))
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void ids(void)
{
	static struct fx x;
	char dir[] = "/tmp/gpup2p-fleet-XXXXXX", cmd[4096], buf[96];
	struct gp_doctor_ctx c;
	struct gp_err e = { 0 };

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s/'", unit_fixture("doctor/healthy"), dir);
	/* GPU0's information as the driver writes it (550.54: the UUID after the model); GPU1's has none */
	if (system(cmd) ||
	    put(dir, "/proc/driver/nvidia/gpus/0000:13:00.0/information", "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   "
		"\t\t 557\nGPU UUID: \t GPU-5e2a7f3c-1b0d-4c8e-9a61-0f3b2d4e6a18\nVideo BIOS: \t 96.00.99.00.01\nBus "
		"Type: \t PCIe\nDevice Minor: \t 0\nGPU Excluded:\t No\n") ||
	    put(dir, "/proc/sys/kernel/random/boot_id", "0c5fd4a2-7d3b-4f6e-8a1c-3b9e2d7f6a05\n") ||
	    fx_load(&x, dir, NULL, 0, 0)) {
		CHECK(0, "the fixture copy in %s", dir);
		return;
	}
	if (gp_doctor_ctx_init(&c, &x.r, &x.p, &x.f, &x.t, &e)) {
		CHECK(0, "doctor context: %s", e.msg);
		fx_unload(&x);
		return;
	}
	CHECK_STR(gp_doctor_gpu_uuid(&c, 0, buf, sizeof(buf)), "GPU-5e2a7f3c-1b0d-4c8e-9a61-0f3b2d4e6a18",
		  "GPU0: the UUID of its information file");
	CHECK(!gp_doctor_gpu_uuid(&c, 1, buf, sizeof(buf)), "GPU1: no UUID line, NULL");
	CHECK(!gp_doctor_gpu_uuid(&c, 0, buf, 20), "a buffer too short for it: NULL, never cut");
	CHECK(!gp_doctor_gpu_uuid(&c, c.topo->ngpu, buf, sizeof(buf)), "no such GPU (a NIC's index): NULL");
	CHECK_STR(gp_doctor_boot_id(&c), "0c5fd4a2-7d3b-4f6e-8a1c-3b9e2d7f6a05", "boot id: read, newline removed");
	gp_doctor_ctx_free(&c);
	/* not a UUID: null, never passed on as if it were one */
	put(dir, "/proc/sys/kernel/random/boot_id", "0c5fd4a2-7d3b-4f6e-8a1c-3b9e2d7f6a0\n");
	if (!gp_doctor_ctx_init(&c, &x.r, &x.p, &x.f, &x.t, &e)) {
		CHECK(!gp_doctor_boot_id(&c), "a boot id one digit short: NULL");
		gp_doctor_ctx_free(&c);
	}
	fx_unload(&x);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "clean up");
}

int main(void)
{
	fit();
	fit_doc();
	first_alarm();
	nagios();
	ids();
	return unit_done();
}
