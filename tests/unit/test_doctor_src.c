/* Unit tests: doctor's sources outside the PCI model: the kernel log gpu.xid reads (Xid lines, the
 * planted log of tests/fixtures/doctor/gpu-xid.spec), and libcuda, loaded only when a selected check
 * reads it, with driver.version's dma-buf mmap probe (tests/fakecuda and its dma-buf build). */
#include <errno.h>
#include <unistd.h>

#include "doctor_fx.h"

/* Xid lines: the formats the driver writes, and lines that only look like them. */
static void xid_parse(void)
{
	static const struct {
		const char *line;
		int rc, xid;
		const char *bdf;
	} t[] = {
		{ "4,7,99000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.", 1, 79,
		  "0000:3b:00.0" },
		{ "[  140.1] NVRM: Xid (0000:01:00): 3, C 00000005", 1, 3, "0000:01:00.0" },   /* older drivers */
		{ "NVRM: Xid (PCI:10000:e1:1f): 140", 1, 140, "10000:e1:1f.0" },                 /* VMD domain, at end */
		{ "NVRM: Xid (PCI:0000:3B:00.0): 48, DBE", 1, 48, "0000:3b:00.0" },               /* a function */
		{ "NVRM: GPU at PCI:0000:3b:00: GPU-3f1c", 0, 0, NULL },
		{ "audit: name=\"Xid (PCI:0000:33:00): 79\"", 0, 0, NULL },
		{ "NVRM: Xid (PCI:0000:3b:00): abc", -EINVAL, 0, NULL },
		{ "NVRM: Xid (PCI:0000:3b): 79", -EINVAL, 0, NULL },
		{ "NVRM: Xid (PCI:0000:3b:20): 79", -EINVAL, 0, NULL },                           /* device > 31 */
		{ "NVRM: Xid (PCI:000:3b:00): 79", -EINVAL, 0, NULL },                            /* 3-digit domain */
		{ "NVRM: Xid (PCI:0000:3b:00): 12345", -EINVAL, 0, NULL },
		{ "NVRM: Xid (PCI:0000:3b:00): -79", -EINVAL, 0, NULL },
		{ "NVRM: Xid (PCI:0000:3b:00): 79x", -EINVAL, 0, NULL },
		{ "NVRM: Xid (", -EINVAL, 0, NULL },
		{ "NVRM: Xid (PCI:0000:3b:00.7): 13", 1, 13, "0000:3b:00.0" },                 /* the device: function 0 */
		{ "NVRM: Xid (PCI:0000:3b:00.8): 79", -EINVAL, 0, NULL },                         /* function > 7 */
		{ "NVRM: Xid (PCI:123456789:3b:00): 79", -EINVAL, 0, NULL },                      /* 9-digit domain */
		{ "NVRM: Xid (PCI:0000:3b:00:00): 79", -EINVAL, 0, NULL },                        /* three colons */
		{ "NVRM: Xid (PCI:0000:3g:00): 79", -EINVAL, 0, NULL },
		{ "NVRM: Xid (PCI:0000:3b:00 79", -EINVAL, 0, NULL },                             /* no ')' */
		{ "NVRM: Xid (PCI:0000:3b:00 GPU0): 79", -EINVAL, 0, NULL },
		{ "NVRM: Xid (PCI:00000000000000:3b:00): 79", -EINVAL, 0, NULL },                 /* longer than a BDF */
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char bdf[GP_BDF_LEN] = "";
		int xid = 0, rc = gp_doctor_xid_parse(t[i].line, bdf, &xid);

		CHECK(rc == t[i].rc && (rc != 1 || (xid == t[i].xid && !strcmp(bdf, t[i].bdf))),
		      "Xid line '%s': %d %d %s (got %d %d %s)", t[i].line, t[i].rc, t[i].xid, t[i].bdf ? t[i].bdf : "-", rc,
		      xid, bdf);
	}
}

/* gpu.xid on the planted log: counts per GPU, and what was not counted (see gpu-xid.spec). */
static void xid_counts(void)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	const char *v;
	int n = 0;

	if (run_on(D("gpu-xid"), kmsg_on, &x, &c)) {
		CHECK(0, "gpu-xid loads");
		return;
	}
	for (int i = 0; i < c.out.n; i++)
		n += !strcmp(c.out.v[i].check->id, "gpu.xid");
	CHECK(n == 9, "gpu.xid: one finding per GPU (8) and one for the device off the bus (%d)", n);
	v = ev_of(&c, "gpu.xid", "0000:13:00.0", "xid");
	CHECK(v && !strcmp(v, "13 x2, 79 x1"), "GPU0: 13 x2, 79 x1 (%s)", v ? v : "none");
	v = ev_of(&c, "gpu.xid", "0000:14:00.0", "xid");
	CHECK(v && !strcmp(v, "31 x1, 13 x1, 94 x1"), "GPU1: 31 x1, 13 x1, 94 x1 (%s)", v ? v : "none");
	v = ev_of(&c, "gpu.xid", NULL, "log");
	CHECK(v && strstr(v, "/dev/kmsg: 25 lines, 8 Xid events"), "25 lines read, 8 Xid events (%s)", v ? v : "none");
	v = ev_of(&c, "gpu.xid", NULL, "unparsed Xid lines");
	CHECK(v && !strcmp(v, "8"), "8 malformed Xid lines not counted (%s)", v ? v : "none");
	CHECK(!ev_of(&c, "gpu.xid", "0000:33:00.0", "xid"), "GPU2: only malformed lines name it: no Xid");
	done(&x, &c);
}

/* Live, with --active: driver.version's dma-buf mmap probe (a context and a GPU allocation) runs. */
static void active_live(struct fx *x, struct gp_doctor_ctx *c)
{
	live(x, c);
	c->active = 1;
}

static void active_cuda(struct fx *x, struct gp_doctor_ctx *c)
{
	cuda_ok(x, c);
	c->active = 1;
}

/* libcuda is loaded only for a selected check that reads it; driver.version's dma-buf mmap probe runs
 * with --active only and says what the probe found, or why it did not run. Runs first: the double's
 * "load" marker is written once per process, when it is first loaded. */
static void cuda_loading(void)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	char marker[] = "/tmp/gpup2p-fakecuda-XXXXXX", dmabuf[1024], buf[256] = "";
	const char *v, *fx = getenv("GPUP2P_FIXTURES");
	FILE *f;
	int fd = mkstemp(marker);

	CHECK(fd >= 0, "marker file");
	if (fd < 0)
		return;
	close(fd);
	unlink(marker);
	setenv("FAKECUDA_MARKER", marker, 1);
	if (!run_sel(D("healthy"), active_cuda, NULL, "driver.cuda_init,p2p", &x, &c)) {
		v = ev_of(&c, "driver.version", "nvidia", "dma-buf cpu mmap");
		CHECK(v && strstr(v, "not probed: no selected check loads libcuda"), "--active --skip driver.cuda_init,p2p: "
		      "version says not probed (%s)", v ? v : "none");
		CHECK(!c.cuda_wanted, "no selected check reads libcuda");
		done(&x, &c);
	}
	CHECK(access(marker, F_OK) != 0, "--skip driver.cuda_init,p2p: libcuda not loaded at all (no marker)");
	if (!run_on(D("healthy"), cuda_ok, &x, &c)) {
		v = ev_of(&c, "driver.version", "nvidia", "dma-buf cpu mmap");
		CHECK(v && strstr(v, "not probed: the probe creates a CUDA context") && strstr(v, "--active"),
		      "static run: libcuda loaded but the context-creating probe left to --active (%s)", v ? v : "none");
		done(&x, &c);
	}
	if (!run_sel(D("healthy"), active_cuda, "driver", NULL, &x, &c)) {
		v = ev_of(&c, "driver.version", "nvidia", "dma-buf cpu mmap");
		CHECK(v && strstr(v, "fails: this driver cannot export dma-bufs"), "probed: no export (%s)", v ? v : "none");
		done(&x, &c);
	}
	f = fopen(marker, "r");
	if (f) {
		buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
		fclose(f);
	}
	CHECK(!strncmp(buf, "load\ncuInit\n", 12), "every check: libcuda loaded, cuInit called (marker: %zu bytes)",
	      strlen(buf));
	unlink(marker);
	unsetenv("FAKECUDA_MARKER");
	snprintf(dmabuf, sizeof(dmabuf), "%s/../tests/fakecuda-dmabuf/libcuda.so.1", fx ? fx : "build/fixtures");
	setenv("GPUP2P_LIBCUDA", dmabuf, 1);
	if (!run_sel(D("healthy"), active_live, "driver", NULL, &x, &c)) {
		v = ev_of(&c, "driver.version", "nvidia", "dma-buf cpu mmap");
		CHECK(v && strstr(v, "works: CUDA dma-buf export, mapped with mmap"), "probed: mmap works (%s)",
		      v ? v : "none");
		done(&x, &c);
	}
	setenv("FAKECUDA_DMABUF_MMAP", "0", 1);
	if (!run_sel(D("healthy"), active_live, "driver", NULL, &x, &c)) {
		v = ev_of(&c, "driver.version", "nvidia", "dma-buf cpu mmap");
		CHECK(v && strstr(v, "fails: exported, but mmap of it fails with errno"), "probed: exported, mmap "
		      "fails (%s)", v ? v : "none");
		done(&x, &c);
	}
	unsetenv("FAKECUDA_DMABUF_MMAP");
	if (!run_on(D("healthy"), NULL, &x, &c)) {
		v = ev_of(&c, "driver.version", "nvidia", "dma-buf cpu mmap");
		CHECK(v && strstr(v, "not probed: offline"), "offline: not probed (%s)", v ? v : "none");
		done(&x, &c);
	}
	unsetenv("GPUP2P_LIBCUDA");
}

/* peermem.missing and peermem.dmabuf ask libcuda and libibverbs where they can (their dma-buf parts):
 * declared as optional sources, shown with '?' by --list; never the gate that skips a check under
 * --no-cuda or offline. */
static void no_cuda_probed(struct fx *x, struct gp_doctor_ctx *c)
{
	(void)x;
	c->probe_libs = 1; /* as live: the libraries are asked */
	c->no_cuda = 1;
}

static void optional_sources(void)
{
	static const char *const ids[] = { "peermem.missing", "peermem.dmabuf" };
	static struct fx x;
	struct gp_doctor_ctx c;
	char buf[128];

	for (int i = 0; i < 2; i++) {
		const struct gp_doctor_check *k = gp_doctor_find(ids[i]);

		CHECK(k && (GP_SRC_OPTIONAL(k->sources) & GP_SRC_CUDA) && (GP_SRC_OPTIONAL(k->sources) & GP_SRC_VERBS) &&
		      !(k->sources & GP_SRC_LIVE_ONLY), "%s: cuda and verbs optional, no live-only source required", ids[i]);
		CHECK_STR(k ? gp_doctor_check_sources(k, buf, sizeof(buf)) : "", "sysfs,proc,cuda?,verbs?",
			  "%s: its sources as --list shows them", ids[i]);
	}
	CHECK_STR(gp_doctor_check_sources(gp_doctor_find("driver.cuda_init"), buf, sizeof(buf)), "cuda",
		  "driver.cuda_init: cuda, required");
	/* --no-cuda: the check runs, CUDA's part unknown for that reason */
	if (!run_sel(D("pm-dmabuf"), no_cuda_probed, "peermem.dmabuf", NULL, &x, &c)) {
		CHECK(c.out.n == 1 && c.out.v[0].sev == GP_SEV_UNKNOWN && strstr(c.out.v[0].message, "--no-cuda"),
		      "--no-cuda: peermem.dmabuf runs, unknown for CUDA's part (%s: %s)", c.out.n ? gp_sev_name(c.out.v[0].sev)
		      : "none", c.out.n ? c.out.v[0].message : "");
		done(&x, &c);
	}
	/* offline: the static parts, not the live-only skip */
	if (!run_sel(D("pm-dmabuf"), NULL, "peermem.dmabuf", NULL, &x, &c)) {
		CHECK(c.out.n == 1 && c.out.v[0].sev == GP_SEV_SKIPPED && strstr(c.out.v[0].message, "static parts are there"),
		      "offline: the static parts checked (%s)", c.out.n ? c.out.v[0].message : "none");
		done(&x, &c);
	}
}

int main(void)
{
	cuda_loading(); /* first: the double's "load" marker is written when it is first loaded */
	xid_parse();
	xid_counts();
	optional_sources();
	return unit_done();
}
