/* Unit tests: ACS disable/restore on a private copy of the workstation fixture (three bridges with
 * ACS 0x001d: the root port on no GPU pair's path, two switch downstream ports on GPU0-GPU1's).
 * Writes go through libpci into the copy's config files, so the bytes on "disk" are what is checked.
 * Failures are injected through struct gp_acs_io: a write that fails, a write the device ignores,
 * and a rollback that fails too. */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acs/state.h"
#include "gpup2p/acs_write.h"
#include "fx.h"

static char tree[256], state[512];

static int load(struct fx *x, const char *dir)
{
	return fx_load(x, dir, NULL, 0, 1);
}

/* A fresh copy of a fixture in tree; the state file inside it. Nonzero (a failed check) when the
 * copy fails, e.g. the fixture is missing. */
static int fresh(const char *name)
{
	char cmd[1024];
	int rc;

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s'", tree, unit_fixture(name), tree);
	snprintf(state, sizeof(state), "%s/run/gpup2p/acs.state", tree);
	rc = system(cmd);
	CHECK(rc == 0, "private copy of fixture %s", name);
	return rc;
}

/* Every config file of the tree, concatenated: the byte-exact picture of the "hardware". */
static char *configs(size_t *len)
{
	static const char *const bdfs[] = { "0000:00:01.0", "0000:01:00.0", "0000:02:08.0", "0000:02:10.0",
					     "0000:03:00.0", "0000:04:00.0" };
	char *all = calloc(6, 4096), path[600];

	*len = 0;
	for (int i = 0; all && i < 6; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/config", tree, bdfs[i]);
		f = fopen(path, "rb");
		if (f) {
			*len += fread(all + *len, 1, 4096, f);
			fclose(f);
		}
	}
	return all;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s = calloc(1, 8192);

	if (f && s)
		s[fread(s, 1, 8191, f)] = '\0';
	if (f)
		fclose(f);
	if (!f) {
		free(s);
		return NULL;
	}
	return s;
}

/* The 16-bit word at config offset off of bdf in the tree, 0xffff when unreadable. */
static uint16_t word_at(const char *bdf, int off)
{
	char path[600];
	unsigned char b[2] = { 0xff, 0xff };
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/config", tree, bdf);
	f = fopen(path, "rb");
	if (f) {
		if (fseek(f, off, SEEK_SET) || fread(b, 1, 2, f) != 2)
			b[0] = b[1] = 0xff;
		fclose(f);
	}
	return (uint16_t)(b[0] | b[1] << 8);
}

static uint16_t ctl_of(const char *bdf)
{
	return word_at(bdf, 0x106);
}

/* Fault injection: the real libpci access, except that the write number `fail_at` (1-based) fails,
 * or is silently ignored (`ignore`), and writes after `dead_after` all fail (a bridge that went away). */
struct inject {
	struct gp_acs_io real;
	int writes, fail_at, ignore, dead_after;
};

static int inj_read(void *ctx, const struct gp_pci_dev *d, int off, uint16_t *v)
{
	struct inject *in = ctx;

	return in->real.read16(in->real.ctx, d, off, v);
}

static int inj_write(void *ctx, const struct gp_pci_dev *d, int off, uint16_t v)
{
	struct inject *in = ctx;

	in->writes++;
	if (in->dead_after && in->writes > in->dead_after)
		return -EIO;
	if (in->writes == in->fail_at)
		return in->ignore ? 0 : -EIO;
	return in->real.write16(in->real.ctx, d, off, v);
}

/* A plan's boot parameter as text (valid until the next call). */
static const char *plan_bp(const struct gp_acs_plan *pl, enum gp_acs_mode mode)
{
	static struct gp_buf b = GP_BUF_INIT;

	gp_buf_reset(&b);
	return gp_acs_plan_boot_param(pl, mode, &b) ? "(out of memory)" : gp_buf_str(&b);
}

static void plan_tests(void)
{
	static struct fx x;
	struct gp_acs_plan pl;
	struct gp_err e = { 0 };
	const char *bad[] = { "zz:1" }, *absent[] = { "0000:09:00.0" }, *gpu[] = { "03:00.0" },
		   *rp[] = { "00:01.0" };

	CHECK(gp_acs_target(0x001d, GP_ACS_CLEAR_REDIRECT) == 0x0011, "redirect mode: 0x001d -> 0x0011");
	CHECK(gp_acs_target(0x007f, GP_ACS_CLEAR_REDIRECT) == 0x0053, "redirect mode keeps SV, TB, UF, DT");
	CHECK(gp_acs_target(0x001d, GP_ACS_ZERO) == 0, "zero mode writes 0");
	if (fresh("workstation") || load(&x, tree))
		return;
	CHECK(gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_PATHS, NULL, 0, GP_ACS_CLEAR_REDIRECT, &pl, &e) == 0 &&
	      pl.n == 2 && !strcmp(pl.c[0].bdf, "0000:02:08.0") && !strcmp(pl.c[1].bdf, "0000:02:10.0") &&
	      pl.nwrite == 2 && pl.c[0].off == 0x106 && pl.c[0].before == 0x1d && pl.c[0].after == 0x11,
	      "default scope: the two downstream ports on GPU0-GPU1, not the root port on no path");
	CHECK_STR(plan_bp(&pl, GP_ACS_CLEAR_REDIRECT),
		  "pci=disable_acs_redir=0000:02:08.0;0000:02:10.0", "boot parameter, redirect mode");
	CHECK_STR(plan_bp(&pl, GP_ACS_ZERO),
		  "pci=config_acs=0000000@0000:02:08.0;0000000@0000:02:10.0", "boot parameter, zero mode");
	pl.c[1].after = pl.c[1].before;
	CHECK_STR(plan_bp(&pl, GP_ACS_CLEAR_REDIRECT),
		  "pci=disable_acs_redir=0000:02:08.0", "boot parameter names only bridges the plan changes");
	pl.c[0].after = pl.c[0].before;
	CHECK_STR(plan_bp(&pl, GP_ACS_CLEAR_REDIRECT), "",
		  "boot parameter empty when nothing changes");
	gp_acs_plan_free(&pl);
	CHECK(gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_ALL, NULL, 0, GP_ACS_ZERO, &pl, &e) == 0 && pl.n == 3 &&
	      pl.nwrite == 3 && pl.c[0].after == 0, "--all: all three bridges, zero mode");
	gp_acs_plan_free(&pl);
	CHECK(gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_LISTED, rp, 1, GP_ACS_CLEAR_REDIRECT, &pl, &e) == 0 &&
	      pl.n == 1 && !strcmp(pl.c[0].bdf, "0000:00:01.0"), "--device 00:01.0: exactly that bridge");
	gp_acs_plan_free(&pl);
	CHECK(gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_LISTED, bad, 1, GP_ACS_CLEAR_REDIRECT, &pl, &e) < 0 &&
	      e.cls == GP_E_USAGE && strstr(e.msg, "not a PCI address"), "--device zz:1: usage error (%s)", e.msg);
	CHECK(gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_LISTED, absent, 1, GP_ACS_CLEAR_REDIRECT, &pl, &e) < 0 &&
	      e.cls == GP_E_USAGE && strstr(e.msg, "no PCI function 0000:09:00.0"), "--device absent: usage error");
	CHECK(gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_LISTED, gpu, 1, GP_ACS_CLEAR_REDIRECT, &pl, &e) < 0 &&
	      e.cls == GP_E_USAGE && strstr(e.msg, "no ACS capability"), "--device on a GPU: no ACS capability");
	fx_unload(&x);

	/* non-root view: the extended space cannot be read, so the plan refuses (exit 3), never guesses */
	if (load(&x, unit_fixture("nonroot")) == 0) {
		int rc = gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_ALL, NULL, 0, GP_ACS_CLEAR_REDIRECT, &pl, &e);

		CHECK(x.a.n > 0 && rc < 0 && e.cls == GP_E_DATA && strstr(e.msg, "run as root"),
		      "non-root fixture: unreadable ACS is an error, not a guess (%d bridges)", x.a.n);
		if (rc == 0)
			gp_acs_plan_free(&pl);
		fx_unload(&x);
	}
}

static int disable(struct fx *x, enum gp_acs_scope sc, const struct gp_acs_io *io, struct gp_acs_plan *pl,
		   struct gp_err *e)
{
	if (gp_acs_plan_disable(&x->t, &x->a, sc, NULL, 0, GP_ACS_CLEAR_REDIRECT, pl, e))
		return -1;
	return gp_acs_disable(&x->p, pl, GP_ACS_CLEAR_REDIRECT, io, state, e);
}

static void round_trip_tests(void)
{
	static struct fx x;
	struct gp_acs_plan pl;
	struct gp_err e = { 0 };
	struct gp_acs_io io;
	size_t l0, l1;
	char *orig, *now, *st, *st2;
	int rc;

	if (fresh("workstation") || load(&x, tree))
		return;
	orig = configs(&l0);
	io = gp_acs_io_libpci(&x.p);
	rc = disable(&x, GP_ACS_SCOPE_PATHS, &io, &pl, &e);
	CHECK(rc == 0 && pl.c[0].result == 1 && pl.c[1].result == 1, "disable: both written and verified (%s)", e.msg);
	gp_acs_plan_free(&pl);
	CHECK(ctl_of("0000:02:08.0") == 0x0011 && ctl_of("0000:02:10.0") == 0x0011 && ctl_of("0000:00:01.0") == 0x001d,
	      "config files: downstream ports 0x0011, root port untouched 0x001d");
	now = configs(&l1);
	{
		int diff = 0;

		for (size_t k = 0; k < l0 && l0 == l1; k++)
			diff += orig[k] != now[k];
		CHECK(l0 == l1 && diff == 2, "exactly two bytes changed on disk (%d)", diff);
	}
	free(now);
	st = slurp(state);
	CHECK_STR(st, "gpup2p-acs-state 1\n# bdf vendor:device ctl-offset before after\n"
		      "0000:02:08.0 10b5:8747 0x106 0x001d 0x0011\n0000:02:10.0 10b5:8747 0x106 0x001d 0x0011\n",
		  "state file records the previous values");

	/* idempotent: a second run reads 0x0011, writes nothing, leaves the state file alone */
	rc = disable(&x, GP_ACS_SCOPE_PATHS, &io, &pl, &e);
	st2 = slurp(state);
	CHECK(rc == 0 && pl.nwrite == 0 && pl.c[0].result == 2 && st && st2 && !strcmp(st, st2),
	      "second disable: nothing to write, state unchanged");
	gp_acs_plan_free(&pl);
	free(st2);

	/* widening the scope merges: the new bridge is added, the first values are kept */
	rc = disable(&x, GP_ACS_SCOPE_ALL, &io, &pl, &e);
	gp_acs_plan_free(&pl);
	st2 = slurp(state);
	CHECK(rc == 0 && st2 && st && !strncmp(st2, st, strlen(st)) &&
	      !strcmp(st2 + strlen(st), "0000:00:01.0 8086:a70d 0x106 0x001d 0x0011\n"),
	      "--all after the default scope: root port appended to the state file");
	free(st2);
	free(st);

	/* restore: byte-exact, state file gone; a second restore finds nothing */
	rc = gp_acs_plan_restore(&x.p, &io, state, &pl, &e);
	CHECK(rc == 0 && pl.n == 3 && pl.nwrite == 3 && pl.c[0].after == 0x001d && pl.c[0].recorded == 0x0011,
	      "restore plan from the state file (%s)", e.msg);
	rc = rc ? rc : gp_acs_restore(&x.p, &pl, &io, state, &e);
	gp_acs_plan_free(&pl);
	now = configs(&l1);
	CHECK(rc == 0 && l0 == l1 && !memcmp(orig, now, l0), "restore: every config file byte-identical to before");
	CHECK(access(state, F_OK) != 0, "restore removed the state file");
	free(now);
	rc = gp_acs_plan_restore(&x.p, &io, state, &pl, &e);
	CHECK(rc < 0 && e.cls == GP_E_UNAVAIL, "restore without a state file: unavailable, not an error to retry");
	free(orig);
	fx_unload(&x);
}

/* The no-partial-state promise: inject a failure into the second write. */
static void fault_tests(void)
{
	static const struct {
		const char *what;
		int fail_at, ignore, dead_after, prior_state;
	} cases[] = {
		{ "second write fails", 2, 0, 0, 0 },
		{ "second write ignored by the device (read-back differs)", 2, 1, 0, 0 },
		{ "second write fails with a state file already there", 2, 0, 0, 1 },
		{ "first write fails", 1, 0, 0, 0 },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		static struct fx x;
		struct gp_acs_plan pl;
		struct gp_err e = { 0 };
		struct inject in = { 0 };
		struct gp_acs_io io;
		size_t l0, l1;
		char *orig, *now, *st0 = NULL, *st1;
		int rc;

		if (fresh("workstation") || load(&x, tree))
			return;
		in.real = gp_acs_io_libpci(&x.p);
		in.fail_at = cases[k].fail_at;
		in.ignore = cases[k].ignore;
		io = (struct gp_acs_io){ inj_read, inj_write, &in };
		if (cases[k].prior_state) {
			const char *rp[] = { "0000:00:01.0" };

			rc = gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_LISTED, rp, 1, GP_ACS_CLEAR_REDIRECT, &pl, &e);
			rc = rc ? rc : gp_acs_disable(&x.p, &pl, GP_ACS_CLEAR_REDIRECT, &in.real, state, &e);
			gp_acs_plan_free(&pl);
			st0 = slurp(state);
			CHECK(rc == 0 && st0, "setup: the root port changed first, state file written");
		}
		orig = configs(&l0);
		rc = disable(&x, GP_ACS_SCOPE_PATHS, &io, &pl, &e);
		now = configs(&l1);
		st1 = slurp(state);
		CHECK(rc < 0 && e.cls == GP_E_FAIL, "%s: fails with exit class FAIL", cases[k].what);
		CHECK(strstr(e.msg, cases[k].fail_at == 1 ? "0000:02:08.0" : "0000:02:10.0") &&
		      strstr(e.msg, "every bridge already changed was put back"),
		      "%s: message names the bridge and the rollback (%s)", cases[k].what, e.msg);
		CHECK(l0 == l1 && !memcmp(orig, now, l0), "%s: config files byte-identical to before", cases[k].what);
		CHECK(cases[k].prior_state ? st0 && st1 && !strcmp(st0, st1) : st1 == NULL,
		      "%s: state file as it was (%s)", cases[k].what, cases[k].prior_state ? "kept" : "absent");
		if (cases[k].fail_at == 2)
			CHECK(pl.c[0].result == -2 && pl.c[1].result == -1,
			      "%s: first bridge reported rolled back, second failed", cases[k].what);
		gp_acs_plan_free(&pl);
		free(orig);
		free(now);
		free(st0);
		free(st1);
		fx_unload(&x);
	}

	/* the rollback itself fails (the bridge went away): the message must say so, never claim success */
	{
		static struct fx x;
		struct gp_acs_plan pl;
		struct gp_err e = { 0 };
		struct inject in = { 0 };
		struct gp_acs_io io;

		if (fresh("workstation") || load(&x, tree))
			return;
		in.real = gp_acs_io_libpci(&x.p);
		in.fail_at = 2;
		in.dead_after = 1;
		io = (struct gp_acs_io){ inj_read, inj_write, &in };
		CHECK(disable(&x, GP_ACS_SCOPE_PATHS, &io, &pl, &e) < 0 && strstr(e.msg, "rollback incomplete") &&
		      strstr(e.msg, "putting back 0x001d on 0000:02:08.0 also failed"),
		      "failed rollback is reported as incomplete, naming the bridge (%s)", e.msg);
		gp_acs_plan_free(&pl);
		fx_unload(&x);
	}
}

static void state_file_tests(void)
{
	static struct fx x;
	struct gp_acs_plan pl;
	struct gp_err e = { 0 };
	struct gp_acs_io io;
	static const struct {
		const char *what, *text, *want;
	} bad[] = {
		{ "wrong magic", "hello\n", ":1: not a gpup2p ACS state file" },
		{ "bad line", "gpup2p-acs-state 1\n0000:02:08.0 10b5:8747 0x106 0x1d\n", ":2: not a gpup2p" },
		{ "trailing junk", "gpup2p-acs-state 1\n0000:02:08.0 10b5:8747 0x106 0x001d 0x0011 x\n", ":2:" },
		{ "other vendor", "gpup2p-acs-state 1\n0000:02:08.0 8086:8747 0x106 0x001d 0x0011\n",
		  "which this machine does not have" },
		{ "absent bridge", "gpup2p-acs-state 1\n0000:07:00.0 10b5:8747 0x106 0x001d 0x0011\n",
		  "which this machine does not have" },
		{ "wrong offset", "gpup2p-acs-state 1\n0000:02:08.0 10b5:8747 0x108 0x001d 0x0011\n",
		  "which this machine does not have" },
		{ "empty", "", ":1: not a gpup2p" },
	};

	if (fresh("workstation") || load(&x, tree))
		return;
	io = gp_acs_io_libpci(&x.p);
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		char cmd[1024];
		size_t l0, l1;
		char *orig = configs(&l0), *now;
		int rc;

		snprintf(cmd, sizeof(cmd), "mkdir -p '%s/run/gpup2p' && printf '%%s' '%s' > '%s'", tree, bad[k].text, state);
		if (system(cmd))
			continue;
		rc = gp_acs_plan_restore(&x.p, &io, state, &pl, &e);
		now = configs(&l1);
		CHECK(rc < 0 && e.cls == GP_E_DATA && strstr(e.msg, bad[k].want) && l0 == l1 && !memcmp(orig, now, l0),
		      "state file %s: refused, nothing written (%s)", bad[k].what, e.msg);
		free(orig);
		free(now);
	}
	/* a malformed state file also stops --disable before any write */
	{
		size_t l0, l1;
		char *orig = configs(&l0), *now;
		int rc = disable(&x, GP_ACS_SCOPE_PATHS, &io, &pl, &e);

		now = configs(&l1);
		CHECK(rc < 0 && e.cls == GP_E_DATA && l0 == l1 && !memcmp(orig, now, l0),
		      "disable with a malformed state file: refused before writing (%s)", e.msg);
		gp_acs_plan_free(&pl);
		free(orig);
		free(now);
	}
	fx_unload(&x);
}

/* The state file is replaced atomically (gp_out_write_atomic): a fresh temporary name, so whatever
 * stands at a name known in advance (here a directory at the old scheme's PATH.tmp.PID) cannot stop or
 * redirect the write; mode 0644; no temporary file stays behind. */
static void state_write_tests(void)
{
	char dir[] = "/tmp/gpup2p-acsstate-XXXXXX", path[128], stale[192], cmd[256];
	static const struct gp_acs_state_entry w = { "0000:02:08.0", 0x10b5, 0x8747, 0x106, 0x001d, 0x0011 };
	struct gp_acs_state_file none = { -1, NULL, 0 };
	struct gp_err e = { 0 };
	struct stat st;
	char *text;
	FILE *p;
	int rc;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/acs-state", dir);
	snprintf(stale, sizeof(stale), "%s.tmp.%ld", path, (long)getpid());
	CHECK(mkdir(stale, 0755) == 0, "a directory at %s", stale);
	rc = gp_acs_state_save(path, &none, &w, 1, &e);
	text = slurp(path);
	CHECK(rc == 0 && text && !strcmp(text, "gpup2p-acs-state 1\n# bdf vendor:device ctl-offset before after\n"
					       "0000:02:08.0 10b5:8747 0x106 0x001d 0x0011\n"),
	      "saved whole beside a stale temporary name (rc %d%s%s)", rc, rc ? ": " : "", rc ? e.msg : "");
	free(text);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644, "mode 0644 (%o)", (unsigned)(st.st_mode & 0777));
	snprintf(cmd, sizeof(cmd), "ls -A '%s'", dir);
	if ((p = popen(cmd, "r"))) {
		char a[64] = "", b[64] = "", c[64] = "";

		CHECK(fscanf(p, "%63s %63s %63s", a, b, c) == 2 && !strcmp(a, "acs-state") && !strncmp(b, "acs-state.tmp.", 14),
		      "only the file and the stale directory there (%s %s %s)", a, b, c);
		pclose(p);
	}
	rmdir(stale);
	unlink(path);
	rmdir(dir);
}

/* The refusal: the IOMMU translating (DMA, DMA-FQ), vfio-pci, or a group owned by user space below a
 * bridge the plan changes. acsguard: GPU2 07:00.0 vfio-pci below 06:08.0, GPU3 08:00.0 group type DMA
 * below 06:10.0, both below root port 00:02.0; everything else identity. */
static void guard_tests(void)
{
	static struct fx x;
	struct gp_acs_plan pl;
	struct gp_err e = { 0 };
	const char *safe[] = { "02:08.0", "00:1c.0", "09:00.0" }, *vfio[] = { "06:08.0" }, *dma[] = { "06:10.0" };
	int rc;

	CHECK(fresh("acsguard") == 0 && load(&x, tree) == 0, "acsguard copied and loaded");
	if (!x.t.n)
		return;
	rc = gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_LISTED, safe, 3, GP_ACS_CLEAR_REDIRECT, &pl, &e);
	CHECK(rc == 0 && pl.nwrite == 3 && gp_acs_plan_check(&x.p, &pl, &e) == 0,
	      "identity IOMMU, no VFIO: a switch port, the PCH root port and a NIC function may be cleared");
	gp_acs_plan_free(&pl);
	rc = gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_LISTED, vfio, 1, GP_ACS_CLEAR_REDIRECT, &pl, &e);
	rc = rc ? rc : gp_acs_plan_check(&x.p, &pl, &e);
	CHECK(rc == GP_ACS_UNSAFE_VFIO && e.cls == GP_E_USAGE &&
	      strstr(e.msg, "refusing to clear ACS on 0000:06:08.0: 0000:07:00.0 below it") &&
	      strstr(e.msg, "vfio-pci") && !strstr(e.msg, "iommu=pt") && !strchr(e.msg, '\n'),
	      "vfio-pci below: refused, one line naming bridge, device, driver (%s)", e.msg);
	CHECK(!strstr(e.msg, "--"), "the refusal names no option: the command adds its own (%s)", e.msg);
	pl.c[0].after = pl.c[0].before;
	CHECK(gp_acs_plan_check(&x.p, &pl, &e) == 0, "a bridge the plan does not change is never refused");
	gp_acs_plan_free(&pl);
	rc = gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_LISTED, dma, 1, GP_ACS_CLEAR_REDIRECT, &pl, &e);
	rc = rc ? rc : gp_acs_plan_check(&x.p, &pl, &e);
	CHECK(rc == GP_ACS_UNSAFE_IOMMU && e.cls == GP_E_USAGE &&
	      strstr(e.msg, "the IOMMU translates (DMA) for 0000:08:00.0 below it") && !strstr(e.msg, "--") &&
	      strlen(e.msg) > 20 && !strcmp(e.msg + strlen(e.msg) - 20, "; boot with iommu=pt"),
	      "IOMMU group of type DMA below: refused, naming the mode, ending in iommu=pt (%s)", e.msg);
	gp_acs_plan_free(&pl);
	rc = gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_PATHS, NULL, 0, GP_ACS_ZERO, &pl, &e);
	rc = rc ? rc : gp_acs_plan_check(&x.p, &pl, &e);
	CHECK(rc == GP_ACS_UNSAFE_VFIO && strstr(e.msg, "on 0000:00:02.0 (and 2 more bridges): 0000:07:00.0 below it"),
	      "default scope: the root port above both is named first, the two switch ports counted (%s)", e.msg);
	gp_acs_plan_free(&pl);
	/* a group owned by a user-space driver ("unmanaged"), with no vfio-pci link */
	{
		char cmd[1024];
		const char *sw[] = { "02:10.0" };
		const struct gp_pci_dev *g1 = gp_pci_find(&x.p, "0000:04:00.0");

		snprintf(cmd, sizeof(cmd), "echo unmanaged > '%s/sys/kernel/iommu_groups/%d/type'", tree, g1 ? g1->iommu_group : -1);
		CHECK(g1 && g1->iommu_group >= 0 && system(cmd) == 0, "GPU1's group set to unmanaged");
		rc = gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_LISTED, sw, 1, GP_ACS_CLEAR_REDIRECT, &pl, &e);
		rc = rc ? rc : gp_acs_plan_check(&x.p, &pl, &e);
		CHECK(rc == GP_ACS_UNSAFE_VFIO && strstr(e.msg, "0000:04:00.0 below it is in IOMMU group") &&
		      strstr(e.msg, "user-space driver") && !strstr(e.msg, "--"),
		      "unmanaged group below: refused (%s)", e.msg);
		gp_acs_plan_free(&pl);
	}
	fx_unload(&x);

	/* the workstation: DMA-FQ everywhere */
	CHECK(load(&x, unit_fixture("workstation")) == 0, "workstation loaded");
	if (x.t.n) {
		rc = gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_PATHS, NULL, 0, GP_ACS_CLEAR_REDIRECT, &pl, &e);
		rc = rc ? rc : gp_acs_plan_check(&x.p, &pl, &e);
		CHECK(rc == GP_ACS_UNSAFE_IOMMU &&
		      strstr(e.msg, "on 0000:02:08.0 (and 1 more bridge): the IOMMU translates (DMA-FQ) for 0000:03:00.0"),
		      "workstation (DMA-FQ): refused (%s)", e.msg);
		gp_acs_plan_free(&pl);
		fx_unload(&x);
	}
}

/* The Intel PCH root port 00:1c.0 of acsguard: written and restored at capability+8 (0x108), never
 * at +6; a state file naming it at 0x106 is another machine's. */
static void pch_tests(void)
{
	static struct fx x;
	struct gp_acs_plan pl;
	struct gp_err e = { 0 };
	struct gp_acs_io io;
	const char *pch[] = { "00:1c.0" };
	char *st;
	int rc;

	CHECK(fresh("acsguard") == 0 && load(&x, tree) == 0, "acsguard copied and loaded");
	if (!x.t.n)
		return;
	io = gp_acs_io_libpci(&x.p);
	rc = gp_acs_plan_disable(&x.t, &x.a, GP_ACS_SCOPE_LISTED, pch, 1, GP_ACS_CLEAR_REDIRECT, &pl, &e);
	CHECK(rc == 0 && pl.n == 1 && pl.c[0].off == 0x108 && pl.c[0].before == 0x001d && pl.c[0].after == 0x0011,
	      "PCH root port: plan at 0x108, 0x001d -> 0x0011");
	rc = rc ? rc : gp_acs_disable(&x.p, &pl, GP_ACS_CLEAR_REDIRECT, &io, state, &e);
	gp_acs_plan_free(&pl);
	CHECK(rc == 0 && word_at("0000:00:1c.0", 0x108) == 0x0011 && word_at("0000:00:1c.0", 0x106) == 0 &&
	      word_at("0000:00:1c.0", 0x104) == 0x005f, "written at 0x108; the capability dword untouched (%s)", e.msg);
	st = slurp(state);
	CHECK(st && strstr(st, "\n0000:00:1c.0 8086:a110 0x108 0x001d 0x0011\n"), "state file records offset 0x108");
	free(st);
	rc = gp_acs_plan_restore(&x.p, &io, state, &pl, &e);
	rc = rc ? rc : gp_acs_restore(&x.p, &pl, &io, state, &e);
	gp_acs_plan_free(&pl);
	CHECK(rc == 0 && word_at("0000:00:1c.0", 0x108) == 0x001d && word_at("0000:00:1c.0", 0x106) == 0,
	      "restored at 0x108 (%s)", e.msg);
	{
		char cmd[1024];

		snprintf(cmd, sizeof(cmd), "mkdir -p '%s/run/gpup2p' && printf 'gpup2p-acs-state 1\\n0000:00:1c.0 8086:a110 "
			 "0x106 0x001d 0x0011\\n' > '%s'", tree, state);
		rc = system(cmd) ? -1 : gp_acs_plan_restore(&x.p, &io, state, &pl, &e);
		CHECK(rc < 0 && e.cls == GP_E_DATA && strstr(e.msg, "does not have") && word_at("0000:00:1c.0", 0x106) == 0,
		      "a state file with the PCH port's control at 0x106 is refused (%s)", e.msg);
	}
	fx_unload(&x);
}

int main(void)
{
	snprintf(tree, sizeof(tree), "%s/gpup2p-acs-unit.%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (long)getpid());
	plan_tests();
	round_trip_tests();
	fault_tests();
	state_file_tests();
	state_write_tests();
	guard_tests();
	pch_tests();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
		if (system(cmd))
			printf("# could not remove %s\n", tree);
	}
	return unit_done();
}
