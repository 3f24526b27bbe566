/* Unit tests: doctor's inputs and outputs around the checks (the checks themselves: test_doctor.c): GPU
 * state in recorded facts and as NVML's test double (tests/fakenvml) reports it, --only/--skip selection,
 * and the exit code a summary gives. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpup2p/clock.h"

#include "doctor_fx.h"

/* GPU state in the recorded facts: keys read back as written, unknown ones left at GP_GPU_UNKNOWN (an
 * older snapshot), unknown keys of a newer writer ignored. */
static void facts_state(void)
{
	static const char text[] = "gpup2p-gpu-facts 1\nsource nvml\n"
				   "gpu 00:06.0 vram=10 bar1=20 persistence=1 replay=37 replay_rise=5 fabric=3 "
				   "fabric_status=0 clk_reasons=72 future_key=9 name=A B\ngpu 00:07.0 vram=10 bar1=20 na=1536 name=C\n";
	static struct gp_gpu_facts f;
	struct gp_err e = { 0 };
	char out[1024] = "";
	FILE *in = fmemopen((void *)text, sizeof(text) - 1, "r"), *o = fmemopen(out, sizeof(out), "w");
	const struct gp_gpu_state *a = &f.gpus[0].st, *b = &f.gpus[1].st;

	CHECK(in && o && gp_gpu_facts_parse(in, "t", &f, &e) == 0 && f.n == 2, "facts with state keys parse (%s)", e.msg);
	CHECK(a->persistence == 1 && a->replay == 37 && a->replay_rise == 5 && a->fabric == 3 && a->fabric_status == 0 &&
	      a->clk_reasons == 72, "state keys read");
	CHECK(a->mig == GP_GPU_UNKNOWN && a->nvl_active == GP_GPU_UNKNOWN && b->persistence == GP_GPU_UNKNOWN &&
	      b->replay == GP_GPU_UNKNOWN, "keys not recorded stay unknown");
	CHECK(b->nvl_active == GP_GPU_NA && b->nvl_inactive == GP_GPU_NA && b->nvl_err[GP_NVL_REPLAY] == GP_GPU_UNKNOWN,
	      "na=1536 (bits 9 and 10: nvlink_active, nvlink_inactive): not supported");
	gp_gpu_facts_write(&f, o);
	fclose(o);
	CHECK(strstr(out, "gpu 0000:00:06.0 vram=10 bar1=20 persistence=1 replay=37 replay_rise=5 fabric=3 fabric_status=0 "
		      "clk_reasons=72 name=A B\n") && strstr(out, "gpu 0000:00:07.0 vram=10 bar1=20 na=1536 name=C\n"),
	      "written back: known keys only, numeric (older readers skip them)");
	if (in)
		fclose(in);
}

/* Reading the state from NVML: the test double (tests/fakenvml) answers each call with a value of its
 * own, so a field filled from the wrong call, or read before its call returned, shows. */
static void nvml_state(void)
{
	char path[1024];
	const char *fx = getenv("GPUP2P_FIXTURES");
	void *lib;
	struct gp_gpu_state a, b;

	snprintf(path, sizeof(path), "%s/../tests/fakenvml/libnvidia-ml.so.1", fx ? fx : "build/fixtures");
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(lib != NULL, "the NVML test double loads (%s)", lib ? path : dlerror());
	if (!lib)
		return;
	gp_gpu_nvml_state(lib, (void *)1, GP_GPU_HEALTH, &a);
	gp_gpu_nvml_state(lib, (void *)2, GP_GPU_HEALTH, &b);
	CHECK(a.replay == 7 && a.replay_rise == 0 && a.nvl_err[GP_NVL_REPLAY] == 1 && a.nvl_err_rise[GP_NVL_REPLAY] == 0,
	      "the counters read once: replays 7, NVLink errors 1, no rise yet (%lld %lld %lld %lld)", a.replay,
	      a.replay_rise, a.nvl_err[GP_NVL_REPLAY], a.nvl_err_rise[GP_NVL_REPLAY]);
	gp_gpu_nvml_recount(lib, (void *)1, &a, 1);
	gp_gpu_nvml_recount(lib, (void *)2, &b, 1);
	CHECK(a.persistence == 1 && a.virt == 2 && a.compute == 3, "persistence 1, virtualization 2, compute mode 3 "
	      "(%d, %d, %d)", a.persistence, a.virt, a.compute);
	CHECK(a.mig == GP_GPU_NA && a.retired_pending == GP_GPU_NA, "MIG not supported, retired pages call missing: NA "
	      "(%d, %d)", a.mig, a.retired_pending);
	CHECK(a.remap_pending == 1 && a.remap_failed == 0, "row remapping pending, not failed");
	CHECK(a.clk_reasons == 0x48 && b.clk_reasons == GP_GPU_NA, "clock event reasons: 0x48, and not supported on "
	      "the other GPU (%llx, %lld)", (unsigned long long)a.clk_reasons, b.clk_reasons);
	CHECK(a.ecc_unc_volatile == 2 && b.ecc_unc_volatile == GP_GPU_NA, "uncorrected volatile ECC errors: 2, and "
	      "not supported on the other GPU (%lld, %lld)", a.ecc_unc_volatile, b.ecc_unc_volatile);
	CHECK(a.replay == 9 && a.replay_rise == 2, "replay counter read twice: 9, rose by 2 (%lld, %lld)", a.replay,
	      a.replay_rise);
	CHECK(a.nvl_active == 12 && a.nvl_inactive == 4, "NVLinks 12 up, 4 down, none beyond (%d, %d)", a.nvl_active,
	      a.nvl_inactive);
	CHECK(a.nvl_err[GP_NVL_REPLAY] == 2 && a.nvl_err_rise[GP_NVL_REPLAY] == 1, "NVLink errors read twice: 2, rose by 1 (%lld, %lld)",
	      a.nvl_err[GP_NVL_REPLAY], a.nvl_err_rise[GP_NVL_REPLAY]);
	CHECK(a.fabric == 3 && a.fabric_status == 0, "fabric completed, success");
	gp_gpu_nvml_recount(lib, (void *)1, &a, 1);
	CHECK(a.replay == 11 && a.replay_rise == 4 && a.nvl_err[GP_NVL_REPLAY] == 3 && a.nvl_err_rise[GP_NVL_REPLAY] == 2,
	      "read a third time: the rises count from the first read: replays 11 (+4), NVLink errors 3 (+2) "
	      "(%lld %lld %lld %lld)", a.replay, a.replay_rise, a.nvl_err[GP_NVL_REPLAY], a.nvl_err_rise[GP_NVL_REPLAY]);
	setenv("FAKENVML_REPLAY_FAIL", "1", 1);
	gp_gpu_nvml_recount(lib, (void *)1, &a, 1);
	unsetenv("FAKENVML_REPLAY_FAIL");
	CHECK(a.replay == 11 && a.replay_rise == 4, "a failed read keeps the last count and rise, never the count as a "
	      "rise (%lld, %lld)", a.replay, a.replay_rise);
	CHECK(a.bar1_total == 256LL << 20 && a.bar1_used == 3LL << 20, "BAR1: 3 MiB of 256 MiB in use (%lld, %lld)",
	      a.bar1_total, a.bar1_used);
	setenv("FAKENVML_BAR1_USED_MIB", "250", 1);
	gp_gpu_nvml_state(lib, (void *)1, GP_GPU_HEALTH, &a);
	unsetenv("FAKENVML_BAR1_USED_MIB");
	CHECK(a.bar1_used == 250LL << 20, "BAR1 use follows the double's knob: 250 MiB (%lld)", a.bar1_used);
	/* a link that comes up between the reads brings its lifetime count: not a rise (link 3 counts) */
	setenv("FAKENVML_LINKS_UP", "3", 1);
	gp_gpu_nvml_state(lib, (void *)1, GP_GPU_HEALTH, &a);
	unsetenv("FAKENVML_LINKS_UP");
	gp_gpu_nvml_recount(lib, (void *)1, &a, 1);
	CHECK(a.nvl_active == 3 && a.nvl_err[GP_NVL_REPLAY] == 0 && a.nvl_err_rise[GP_NVL_REPLAY] == 0, "links 0-2 up, then 0-11: link 3's count "
	      "is no rise, the first read stands (%d, %lld, %lld)", a.nvl_active, a.nvl_err[GP_NVL_REPLAY], a.nvl_err_rise[GP_NVL_REPLAY]);
	CHECK(b.persistence == GP_GPU_UNKNOWN && b.virt == GP_GPU_NA && b.compute == GP_GPU_NA && b.replay == GP_GPU_NA &&
	      b.nvl_active == GP_GPU_NA && b.nvl_err[GP_NVL_REPLAY] == GP_GPU_NA && b.fabric == GP_GPU_NA && b.remap_failed == GP_GPU_NA &&
	      b.bar1_total == GP_GPU_NA && b.bar1_used == GP_GPU_NA,
	      "a GPU that supports nothing: NA; a failing call: unknown");
	/* doctor's own second read (from_zero 0): NVLink counters again only where one counted */
	{
		struct gp_gpu_state z, y;

		gp_gpu_nvml_state(lib, (void *)1, GP_GPU_HEALTH, &y);
		z = y;
		for (int k = 0; k < GP_NVL_COUNTERS; k++)
			z.nvl_err[k] = z.nvl_err_rise[k] = 0;
		gp_gpu_nvml_recount(lib, (void *)1, &z, 0);
		CHECK(z.nvl_err[GP_NVL_REPLAY] == 0 && z.nvl_err_rise[GP_NVL_REPLAY] == 0 && z.replay_rise >= 0,
		      "no NVLink error in the first read: not read again (%lld, +%lld)", z.nvl_err[GP_NVL_REPLAY],
		      z.nvl_err_rise[GP_NVL_REPLAY]);
		a = y;
		gp_gpu_nvml_recount(lib, (void *)1, &y, 0);
		CHECK(a.nvl_err[GP_NVL_REPLAY] > 0 && y.nvl_err[GP_NVL_REPLAY] > a.nvl_err[GP_NVL_REPLAY] &&
		      y.nvl_err_rise[GP_NVL_REPLAY] > 0, "errors counted at the first read: read again, the rise shows "
		      "(%lld -> %lld, +%lld)", a.nvl_err[GP_NVL_REPLAY], y.nvl_err[GP_NVL_REPLAY],
		      y.nvl_err_rise[GP_NVL_REPLAY]);
	}
	dlclose(lib);
}

/* doctor --active, live: pcie.replay and nvlink.errors read the counters once more, GPU0's through the
 * test double (its counters rise on every read), the other GPUs' facts as recorded (the double's
 * handles for them support nothing). */
static void counter_setup(struct fx *x, struct gp_doctor_ctx *c)
{
	struct gp_gpu_facts *f = (struct gp_gpu_facts *)c->facts;

	(void)x;
	c->probe_libs = 1;
	c->active = 1;
	/* the recorded first read as the double would have answered it: its 12 NVLinks up (the second read
	 * counts the same links only) */
	for (int i = 0; f && i < f->n; i++)
		if (!strcmp(f->gpus[i].bdf, "0000:13:00.0"))
			f->gpus[i].st.nvl_active = 12;
}

static void counters_again(void)
{
	char path[1024];
	const char *fx = getenv("GPUP2P_FIXTURES"), *v;
	struct gp_gpu_state st[GP_GPU_MAX + 1];
	struct gp_gpu_facts *f = calloc(1, sizeof(*f));
	struct gp_doctor_ctx c;
	struct fx x;
	void *lib;
	double t0, dt;

	snprintf(path, sizeof(path), "%s/../tests/fakenvml/libnvidia-ml.so.1", fx ? fx : "build/fixtures");
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL); /* gpup2p's dlopen("libnvidia-ml.so.1") finds it */
	CHECK(lib && f, "the NVML test double loads (%s)", lib ? path : dlerror());
	if (!lib || !f) {
		free(f);
		return;
	}
	setenv("FAKENVML_FULL_BUS", "0000:13:00.0", 1);
	/* the facts as the first read left them: GPU0 with the double's counters, GPU1 supports none */
	f->available = 1;
	f->n = 2;
	snprintf(f->gpus[0].bdf, sizeof(f->gpus[0].bdf), "0000:13:00.0");
	snprintf(f->gpus[1].bdf, sizeof(f->gpus[1].bdf), "0000:14:00.0");
	gp_gpu_nvml_state(lib, (void *)1, GP_GPU_HEALTH, &f->gpus[0].st);
	gp_gpu_nvml_state(lib, (void *)2, GP_GPU_HEALTH, &f->gpus[1].st);
	f->counted_at = gp_clock_s();
	t0 = gp_clock_s();
	CHECK(gp_gpu_nvml_recount_facts(f, st, 0.05) == 0, "the counters read again");
	dt = gp_clock_s() - t0;
	CHECK(dt >= 0.045, "... after the rest of a 50 ms window (%.3f s; a sleep is never shorter)", dt);
	CHECK(st[0].replay_rise == st[0].replay - f->gpus[0].st.replay && st[0].replay_rise > 0 &&
	      st[0].nvl_err_rise[GP_NVL_REPLAY] > 0 && f->gpus[0].st.replay_rise == 0,
	      "GPU0: both rose since the facts' read (+%lld, +%lld); the facts untouched", st[0].replay_rise,
	      st[0].nvl_err_rise[GP_NVL_REPLAY]);
	CHECK(st[1].replay == GP_GPU_NA && st[1].nvl_err[GP_NVL_REPLAY] == GP_GPU_NA, "GPU1: still not supported");
	/* the pause on given clock readings, not timed (a loaded machine stretches any sleep) */
	CHECK(gp_gpu_nvml_pause_s(100, 0.05, 110) == 0, "a window long past: no pause");
	CHECK(gp_gpu_nvml_pause_s(100, 0.05, 100.02) > 0.0299 && gp_gpu_nvml_pause_s(100, 0.05, 100.02) < 0.0301,
	      "20 ms into a 50 ms window: 30 ms left");
	CHECK(gp_gpu_nvml_pause_s(100, 0.05, 99) == 0.05, "a clock behind the read: at most the window");
	free(f);

	/* the checks: a warning under --active (the double's counters rose since the recorded read) */
	if (!run_sel(D("healthy"), counter_setup, "pcie.replay,nvlink.errors", NULL, &x, &c)) {
		v = ev_of(&c, "pcie.replay", "0000:13:00.0", "rise between two reads");
		CHECK(v && atoi(v) > 0 && c.out.v[0].sev == GP_SEV_WARNING, "--active: GPU0's replays rose: warning (%s)",
		      v ? v : "none");
		v = ev_of(&c, "nvlink.errors", "0000:13:00.0", "nvlink replay errors");
		CHECK(v && strstr(v, "(+") && atoi(strstr(v, "(+") + 2) > 0, "--active: GPU0's NVLink replays rose (%s)",
		      v ? v : "none");
		v = ev_of(&c, "pcie.replay", "0000:14:00.0", "rise between two reads");
		CHECK(v && !strcmp(v, "0"), "--active: GPU1 (no answer from the double): the recorded 0 (%s)", v ? v : "none");
		done(&x, &c);
	}
	/* the static doctor: the facts' reads, no rise, no pause */
	if (!run_sel(D("healthy"), NULL, "pcie.replay,nvlink.errors", NULL, &x, &c)) {
		int warn = 0;

		for (int i = 0; i < c.out.n; i++)
			warn += c.out.v[i].sev != GP_SEV_OK;
		CHECK(!warn && c.out.n > 0, "static: %d findings, all ok (%d not)", c.out.n, warn);
		done(&x, &c);
	}
	unsetenv("FAKENVML_FULL_BUS");
	dlclose(lib);
}

static void selection(void)
{
	int n = gp_doctor_count(), on_n = 0, i;
	unsigned char *on = calloc((size_t)n, 1);
	struct gp_err e = { 0 };
	int sum[GP_SEV_N] = { 0 };

	CHECK(n >= 25 && n <= 512, "the registry holds %d checks (run_on selects from 512 at most)", n);
	CHECK(!gp_doctor_select(on, "bar,iommu.mode", "bar.rebar", &e), "--only bar,iommu.mode --skip bar.rebar");
	for (i = 0; i < n; i++)
		on_n += on[i];
	CHECK(on_n == 4 && on[0] == 0, "selects bar.small, bar.unassigned, bar.bar1_used, iommu.mode (%d)", on_n);
	CHECK(!gp_doctor_select(on, "kmod.*", NULL, &e), "family glob kmod.*");
	CHECK(gp_doctor_select(on, "bar.nosuch", NULL, &e) < 0 && e.cls == GP_E_USAGE && strstr(e.msg, "bar.nosuch"),
	      "unknown id: usage error naming it");
	CHECK(gp_doctor_select(on, NULL, "nosuch", &e) < 0 && e.cls == GP_E_USAGE, "unknown family in --skip");
	free(on);
	sum[GP_SEV_UNKNOWN] = 1;
	CHECK(gp_doctor_exit_code(sum, 0) == 0 && gp_doctor_exit_code(sum, 1) == 1, "unknown counts only with --strict");
	sum[GP_SEV_WARNING] = 1;
	CHECK(gp_doctor_exit_code(sum, 0) == 1, "a warning: exit 1");
	sum[GP_SEV_ERROR] = 1;
	CHECK(gp_doctor_exit_code(sum, 0) == 2, "an error: exit 2");
}

int main(void)
{
	facts_state();
	nvml_state();
	counters_again();
	selection();
	return unit_done();
}
