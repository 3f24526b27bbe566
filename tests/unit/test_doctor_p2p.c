/* Unit tests: the p2p doctor checks beyond the registry walk of test_doctor.c: what the messages name
 * (the side that refuses, the reason found elsewhere, the GeForce rule), the exit code of a planted
 * fault, progress of the active checks, and the PCIe rates p2p.bandwidth compares with (worked out by
 * hand from the PCIe specifications' line rates and encodings). */
#include "doctor/p2p.h"
#include "fx.h"
#include "p2p_env.h"

#define NEAR(a, b, eps) ((a) - (b) < (eps) && (b) - (a) < (eps))

static int progress_calls;
static int fixture_root;  /* run() keeps reading the fixture (libcuda's double still asked): IOMMU group types */

static void count_progress(void *arg, const char *what)
{
	(void)arg;
	progress_calls += what && !strncmp(what, "p2p.", 4);
}

/* Run check `id` on a fixture with the doubles set (live, active when asked). */
static int run(const char *fixture, const char *id, const char *nopeer, const char *nvml, const char *corrupt,
	       const char *gbps, int active, struct fx *x, struct gp_doctor_ctx *c)
{
	static unsigned char on[512];
	static char lib[1024];
	const char *fx = getenv("GPUP2P_FIXTURES");
	struct gp_err e = { 0 };

	if (gp_doctor_select(on, id, NULL, &e)) {
		CHECK(0, "%s: select %s: %s", fixture, id, e.msg);
		return -1;
	}
	if (fx_load(x, unit_fixture(fixture), NULL, 0, 0))
		return -1; /* fx_load reported it */
	if (gp_doctor_ctx_init(c, &x->r, &x->p, &x->f, &x->t, &e)) {
		CHECK(0, "%s: doctor context: %s", fixture, e.msg);
		fx_unload(x);
		return -1;
	}
	{
		/* the driver's params as the fixture has them, read (and cached) before the root turns live */
		char buf[64];
		int missing;

		gp_doctor_nv_param(c, "RegistryDwords", buf, sizeof(buf), &missing);
	}
	x->r.live = !fixture_root;
	c->probe_libs |= fixture_root;
	snprintf(lib, sizeof(lib), "%s/../tests/fakecuda/libcuda.so.1", fx ? fx : "build/fixtures");
	setenv("GPUP2P_LIBCUDA", lib, 1);
	unsetenv("FAKECUDA_GPUS");
	unit_p2p_env(&x->t, nopeer, nvml, NULL, corrupt);
	if (gbps)
		setenv("FAKECUDA_PEER_GBPS", gbps, 1);
	c->active = active;
	c->progress = count_progress;
	if (gp_doctor_run(c, on, &e)) {
		CHECK(0, "%s %s: doctor run: %s", fixture, id, e.msg);
		return -1;
	}
	return 0;
}

static const struct gp_finding *find(const struct gp_doctor_ctx *c, const char *subject)
{
	for (int i = 0; i < c->out.n; i++)
		if (!strcmp(c->out.v[i].subject, subject))
			return &c->out.v[i];
	return NULL;
}

static const char *ev(const struct gp_finding *f, const char *key)
{
	for (int i = 0; f && i < f->nev; i++)
		if (!strcmp(f->ev[i].key, key))
			return f->ev[i].value;
	return "";
}

static int exit_code(const struct gp_doctor_ctx *c)
{
	int sum[GP_SEV_N];

	gp_doctor_summary(&c->out, sum);
	return gp_doctor_exit_code(sum, 0);
}

static void done(struct fx *x, struct gp_doctor_ctx *c)
{
	gp_doctor_ctx_free(c);
	fx_unload(x);
}

#define MSG(f, s) ((f) && strstr((f)->message, (s)))

static void access_reasons(void)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	const struct gp_finding *f;

	/* every pair refused on a clean PCIe machine: SYS pairs info, PIX/PXB pairs warnings without a reason */
	if (!run("doctor/p2p-pcie", "p2p.access", "1", NULL, NULL, NULL, 0, &x, &c)) {
		f = find(&c, "0000:01:00.0-0000:83:00.0");
		CHECK(f && f->sev == GP_SEV_INFO && MSG(f, "by design"), "SYS pair refused: info, not a warning");
		f = find(&c, "0000:86:00.0-0000:87:00.0");
		CHECK(f && f->sev == GP_SEV_WARNING && MSG(f, "no ACS redirection on its path, no IOMMU translation"),
		      "PIX pair refused, nothing found elsewhere: a warning that says so");
		CHECK(exit_code(&c) == 1, "exit 1");
		done(&x, &c);
	}
	if (!run("doctor/p2p-acs", "p2p.access", "2:3,3:2", NULL, NULL, NULL, 0, &x, &c)) {
		f = find(&c, "0000:86:00.0-0000:87:00.0");
		CHECK(MSG(f, "ACS redirects peer requests on 0000:85:04.0") && f->fix && strstr(f->fix, "gpup2p acs --disable") &&
		      !strcmp(ev(f, "ACS redirect on the path"), "0000:85:04.0"), "the redirecting bridge named, with its fix");
		f = find(&c, "0000:83:00.0-0000:86:00.0");
		CHECK(f && f->sev == GP_SEV_OK, "a pair CUDA allows stays ok");
		done(&x, &c);
	}
	if (!run("doctor/p2p-acs", "p2p.access", "3:2", NULL, NULL, NULL, 0, &x, &c)) {
		f = find(&c, "0000:86:00.0-0000:87:00.0");
		CHECK(MSG(f, "refuses P2P from GPU3 to GPU2"), "one direction refused: named (%s)", f ? f->message : "");
		done(&x, &c);
	}
	if (!run("doctor/iommu-dma", "p2p.access", "1", NULL, NULL, NULL, 0, &x, &c)) {
		f = find(&c, "0000:13:00.0-0000:14:00.0");
		CHECK(f && f->sev == GP_SEV_WARNING && MSG(f, "(NV18)") && MSG(f, "the IOMMU translates") && strstr(f->fix, "iommu=pt"),
		      "NVLink pair refused under DMA-FQ: the IOMMU named");
		done(&x, &c);
	}
	if (!run("doctor/drv-params", "p2p.access", "1", NULL, NULL, NULL, 0, &x, &c)) {
		f = find(&c, "0000:13:00.0-0000:14:00.0");
		CHECK(MSG(f, "registry keys force a P2P mode") && strstr(ev(f, "RegistryDwords"), "P2P"),
		      "the RegistryDwords P2P key named (%s)", f ? f->message : "");
		done(&x, &c);
	}
	if (!run("doctor/p2p-geforce", "p2p.access", "1", NULL, NULL, NULL, 0, &x, &c)) {
		f = find(&c, "0000:03:00.0-0000:04:00.0");
		CHECK(f && f->sev == GP_SEV_INFO && MSG(f, "GeForce") && MSG(f, "large BAR") && MSG(f, "--active"),
		      "GeForce refused: info explaining the driver's rule and --active");
		CHECK(exit_code(&c) == 0, "GeForce refused: exit 0");
		done(&x, &c);
	}
}

static void nvml_sides(void)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	const struct gp_finding *f;

	if (!run("doctor/p2p-pcie", "p2p.nvml_status", NULL, "4", NULL, NULL, 0, &x, &c)) {
		f = find(&c, "0000:86:00.0-0000:87:00.0");
		CHECK(MSG(f, "NVML refuses") && MSG(f, "disabled by registry key"), "CUDA yes, NVML no: NVML named (%s)",
		      f ? f->message : "");
		done(&x, &c);
	}
	if (!run("doctor/p2p-pcie", "p2p.nvml_status", "1", NULL, NULL, NULL, 0, &x, &c)) {
		f = find(&c, "0000:86:00.0-0000:87:00.0");
		CHECK(MSG(f, "CUDA refuses"), "CUDA no, NVML yes: CUDA named");
		done(&x, &c);
	}
}

static void active(void)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	const struct gp_finding *f;

	progress_calls = 0;
	if (!run("workstation", "p2p.verify", NULL, NULL, "peer", NULL, 1, &x, &c)) {
		f = find(&c, "0000:03:00.0-0000:04:00.0");
		CHECK(f && f->sev == GP_SEV_ERROR && MSG(f, "P2P says yes, data wrong"), "corrupt peer copy: error");
		CHECK(exit_code(&c) == 2, "corrupt peer copy: exit 2");
		/* 2 GPUs: host->GPU and GPU->host each, then both directions of the pair */
		CHECK(progress_calls == 6, "progress: one line per path (%d)", progress_calls);
		done(&x, &c);
	}
	if (!run("workstation", "p2p.verify", "1", NULL, NULL, NULL, 1, &x, &c)) {
		f = find(&c, "0000:03:00.0-0000:04:00.0");
		CHECK(f && f->sev == GP_SEV_OK && strstr(ev(f, "paths"), "staged"), "no peer access: staged copies verified");
		done(&x, &c);
	}
	if (!run("workstation", "p2p.bandwidth", NULL, NULL, NULL, "0:1=3", 1, &x, &c)) {
		f = find(&c, "0000:03:00.0-0000:04:00.0");
		/* workstation: GPUs Gen4 x16 below switch ports of Gen3 x16: 15.75 GB/s, floor 7.88 */
		CHECK(f && f->sev == GP_SEV_WARNING && strstr(ev(f, "expected"), "15.75 GB/s (PCIe Gen3 x16)") &&
		      strstr(ev(f, "measured"), "GPU0->GPU1 3.00 GB/s"), "slow peer: measured vs expected (%s; %s)",
		      ev(f, "measured"), ev(f, "expected"));
		f = find(&c, "0000:03:00.0");
		/* the double's host rate, 25 GB/s plus 2 us a copy: 64 MiB / (64 MiB / 25e9 + 2e-6 s) = 24.98 GB/s */
		CHECK(f && f->sev == GP_SEV_OK && strstr(ev(f, "measured"), "host->GPU0 24.98 GB/s"), "host copies ok (%s)",
		      ev(f, "measured"));
		/* the figures --prometheus prints, in bytes/s: host (-1) to GPU0 at the double's h2d 25 GB/s
		 * (24.981e9 as above), back at its d2h 26 GB/s: 64 MiB / (64 MiB / 26e9 + 2 us) = 25.980e9 */
		CHECK(f && f->nfig == 2 && f->fig[0].src == -1 && f->fig[0].dst == 0 && NEAR(f->fig[0].bytes_per_s, 24.981e9, 1e6) &&
		      f->fig[1].src == 0 && f->fig[1].dst == -1 && NEAR(f->fig[1].bytes_per_s, 25.980e9, 1e6),
		      "host figures: host->GPU0 24.98e9, GPU0->host 25.98e9 B/s");
		/* the pair: 0->1 at 3 GB/s (64 MiB / (64 MiB / 3e9 + 2 us) = 2.9997e9), 1->0 at the double's
		 * 300 GB/s (2.9734e11) */
		f = find(&c, "0000:03:00.0-0000:04:00.0");
		CHECK(f && f->nfig == 2 && f->fig[0].src == 0 && f->fig[0].dst == 1 && NEAR(f->fig[0].bytes_per_s, 2.99973e9, 1e6) &&
		      f->fig[1].src == 1 && f->fig[1].dst == 0 && NEAR(f->fig[1].bytes_per_s, 2.97342e11, 1e7),
		      "pair figures: GPU0->GPU1 and GPU1->GPU0 in B/s (%d)", f ? f->nfig : -1);
		done(&x, &c);
	}
	if (!run("workstation", "p2p.bandwidth", "1", NULL, NULL, NULL, 1, &x, &c)) {
		f = find(&c, "0000:03:00.0-0000:04:00.0");
		CHECK(f && f->sev == GP_SEV_SKIPPED, "no peer access: the pair's bandwidth skipped");
		done(&x, &c);
	}
}

static void rates(void)
{
	CHECK(NEAR(gp_doctor_pcie_gbps(8, 16), 15.7538, 1e-3), "Gen3 x16: 8 GT/s x 128/130 / 8 x 16 = 15.754 GB/s");
	CHECK(NEAR(gp_doctor_pcie_gbps(16, 16), 31.5077, 1e-3), "Gen4 x16: 31.508 GB/s");
	CHECK(NEAR(gp_doctor_pcie_gbps(32, 16), 63.0154, 1e-3), "Gen5 x16: 63.015 GB/s");
	CHECK(NEAR(gp_doctor_pcie_gbps(2.5, 1), 0.25, 1e-9), "Gen1 x1: 2.5 GT/s x 8/10 / 8 = 0.25 GB/s");
	CHECK(NEAR(gp_doctor_pcie_gbps(5, 8), 4.0, 1e-9), "Gen2 x8: 4 GB/s");
	CHECK(NEAR(gp_doctor_pcie_gbps(64, 16), 121.0, 1e-9), "Gen6 x16: 64 GT/s x 242/256 / 8 x 16 = 121 GB/s");
	CHECK(gp_doctor_pcie_gbps(0, 16) == 0 && gp_doctor_pcie_gbps(8, 0) == 0, "unknown speed or width: 0");
}

/* iommu.mode and p2p.access decide "does the IOMMU translate this GPU's DMA" alike (gp_doctor_translated):
 * a group without a readable type follows the system's mode; an identity group on a mixed system is not
 * translated. */
static void iommu_agree(void)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	const struct gp_finding *f;

	fixture_root = 1;
	if (!run("doctor/iommu-untyped", "iommu.mode", NULL, NULL, NULL, NULL, 0, &x, &c)) {
		f = find(&c, "system");
		CHECK(f && f->sev == GP_SEV_WARNING && fx_has_bdf(f, "0000:14:00.0") && fx_has_bdf(f, "0000:13:00.0"),
		      "untyped group under DMA-FQ: iommu.mode lists GPU1 (%d devices)", f ? f->nbdf : -1);
		done(&x, &c);
	}
	if (!run("doctor/iommu-untyped", "p2p.access", "1", NULL, NULL, NULL, 0, &x, &c)) {
		f = find(&c, "0000:13:00.0-0000:14:00.0");
		CHECK(MSG(f, "the IOMMU translates"), "untyped group under DMA-FQ: p2p.access names the IOMMU");
		done(&x, &c);
	}
	if (!run("doctor/iommu-mixed", "iommu.mode", NULL, NULL, NULL, NULL, 0, &x, &c)) {
		f = find(&c, "system");
		CHECK(f && !fx_has_bdf(f, "0000:13:00.0") && !fx_has_bdf(f, "0000:14:00.0") && fx_has_bdf(f, "0000:33:00.0"),
		      "mixed: iommu.mode lists GPU2, not the identity GPU0 and GPU1");
		done(&x, &c);
	}
	if (!run("doctor/iommu-mixed", "p2p.access", "1", NULL, NULL, NULL, 0, &x, &c)) {
		f = find(&c, "0000:13:00.0-0000:14:00.0");
		CHECK(f && !MSG(f, "the IOMMU translates"), "mixed: p2p.access does not blame the IOMMU for GPU0-GPU1");
		f = find(&c, "0000:33:00.0-0000:34:00.0");
		CHECK(MSG(f, "the IOMMU translates"), "mixed: p2p.access names the IOMMU for GPU2-GPU3");
		done(&x, &c);
	}
	fixture_root = 0;
}

int main(void)
{
	rates();
	access_reasons();
	nvml_sides();
	active();
	iommu_agree();
	return unit_done();
}
