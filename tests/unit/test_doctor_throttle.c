/* Unit tests: gpu.throttle (issue 26, class 8): NVML's clock event reasons judged per GPU, the reason
 * and its fix named; idle, application clocks and the power cap are no fault at rest. Planted fault
 * gpu-throttle against its twin gpu-throttle-idle (idle alone, as the real 4x H200 reported). With
 * --active, live on the doubles (fakecuda copies, fakenvml's reasons): the PCIe link under load below
 * what both ends support (gpu-throttle-link) against the workstation as it is, and the power cap under
 * load an info. */
#include <dlfcn.h>

#include "doctor_fx.h"

static const struct {
	const char *fixture, *subject;
	enum gp_sev sev;
	const char *text; /* in the message or the fix */
} wants[] = {
	{ D("gpu-throttle"), "0000:13:00.0", GP_SEV_WARNING, "HW thermal slowdown" },
	{ D("gpu-throttle"), "0000:13:00.0", GP_SEV_WARNING, "airflow" },
	{ D("gpu-throttle"), "0000:14:00.0", GP_SEV_WARNING, "HW power brake slowdown" },
	{ D("gpu-throttle"), "0000:14:00.0", GP_SEV_WARNING, "power supplies" },
	{ D("gpu-throttle"), "0000:33:00.0", GP_SEV_WARNING, "SW thermal slowdown" },
	{ D("gpu-throttle"), "0000:93:00.0", GP_SEV_WARNING, "BMC's event log" },
	{ D("gpu-throttle"), "0000:34:00.0", GP_SEV_OK, "SW power cap" },       /* idle + power cap: no fault */
	{ D("gpu-throttle"), "0000:94:00.0", GP_SEV_SKIPPED, NULL },            /* not recorded */
	{ D("gpu-throttle-idle"), "0000:13:00.0", GP_SEV_OK, "idle" },
};

/* --active with the doubles on a fixture root (probe_libs, as live): the libcuda double copies, the NVML double answers for GPU0 (FAKENVML_FULL_BUS)
 * with FAKENVML_CLK_REASONS; the sampler reads the fixture's link files. */
static const char *reasons_env;

static void active(struct fx *x, struct gp_doctor_ctx *c)
{
	c->active = 1;
	c->probe_libs = 1;
	cuda_lib(NULL, NULL);
	unit_p2p_env(&x->t, NULL, NULL, NULL, NULL);
	setenv("FAKENVML_FULL_BUS", "0000:03:00.0", 1);
	if (reasons_env)
		setenv("FAKENVML_CLK_REASONS", reasons_env, 1);
	else
		unsetenv("FAKENVML_CLK_REASONS");
}

static const struct gp_finding *of(const struct gp_doctor_ctx *c, const char *subject)
{
	for (int i = 0; i < c->out.n; i++)
		if (!strcmp(c->out.v[i].check->id, "gpu.throttle") && !strcmp(c->out.v[i].subject, subject))
			return &c->out.v[i];
	return NULL;
}

static void under_load(void)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	const struct gp_finding *f;
	char lib[1024];
	const char *fx = getenv("GPUP2P_FIXTURES");
	void *nvml;

	/* the NVML double, loaded by path first: gpup2p's dlopen("libnvidia-ml.so.1") then finds it */
	snprintf(lib, sizeof(lib), "%s/../tests/fakenvml/libnvidia-ml.so.1", fx ? fx : "build/fixtures");
	nvml = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	CHECK(nvml != NULL, "the NVML double loads (%s)", nvml ? lib : dlerror());
	reasons_env = "0x1";
	if (!run_sel(D("gpu-throttle-link"), active, "gpu.throttle", NULL, &x, &c)) {
		f = of(&c, "0000:03:00.0");
		CHECK(f && f->sev == GP_SEV_WARNING && strstr(f->message, "ran at 2.5 GT/s x16, below the 8.0 GT/s x16"),
		      "GPU0's link at Gen1 under load: warning (%s)", f ? f->message : "none");
		CHECK(f && f->fix && strstr(f->fix, "riser"), "the fix names the riser");
		f = of(&c, "0000:04:00.0");
		CHECK(f && f->sev == GP_SEV_WARNING && strstr(f->message, "8.0 GT/s x8, below the 8.0 GT/s x16"),
		      "GPU1's link at half width under load: warning (%s)", f ? f->message : "none");
		done(&x, &c);
	}
	if (!run_sel("workstation", active, "gpu.throttle", NULL, &x, &c)) {
		f = of(&c, "0000:03:00.0");
		CHECK(f && f->sev == GP_SEV_OK && strstr(f->message, "under load"), "the twin: ok under load (%s)",
		      f ? f->message : "none");
		f = of(&c, "0000:04:00.0");
		CHECK(f && f->sev == GP_SEV_OK, "the twin's GPU1: ok (NVML reports no reasons for it)");
		done(&x, &c);
	}
	reasons_env = "0x4";
	if (!run_sel("workstation", active, "gpu.throttle", NULL, &x, &c)) {
		f = of(&c, "0000:03:00.0");
		CHECK(f && f->sev == GP_SEV_INFO && strstr(f->message, "power cap"), "the power cap under load: info (%s)",
		      f ? f->message : "none");
		done(&x, &c);
	}
	reasons_env = "0x48";
	if (!run_sel("workstation", active, "gpu.throttle", NULL, &x, &c)) {
		f = of(&c, "0000:03:00.0");
		CHECK(f && f->sev == GP_SEV_WARNING && strstr(f->message, "HW thermal slowdown"),
		      "HW thermal slowdown seen under load: warning (%s)", f ? f->message : "none");
		done(&x, &c);
	}
	unsetenv("FAKENVML_FULL_BUS");
	unsetenv("FAKENVML_CLK_REASONS");
	if (nvml)
		dlclose(nvml);
}

int main(void)
{
	under_load();
	for (size_t k = 0; k < sizeof(wants) / sizeof(wants[0]); k++) {
		static struct fx x;
		struct gp_doctor_ctx c;
		int match = 0, alarms = 0;

		if (run_sel(wants[k].fixture, NULL, "gpu.throttle", NULL, &x, &c))
			continue;
		for (int i = 0; i < c.out.n; i++) {
			const struct gp_finding *f = &c.out.v[i];

			alarms += f->sev <= GP_SEV_INFO || f->sev == GP_SEV_UNKNOWN;
			match += f->sev == wants[k].sev && !strcmp(f->subject, wants[k].subject) &&
				 (!wants[k].text || strstr(f->message, wants[k].text) || (f->fix && strstr(f->fix, wants[k].text)));
		}
		CHECK(match == 1, "gpu.throttle says %s on %s about %s%s%s", gp_sev_name(wants[k].sev), wants[k].fixture,
		      wants[k].subject, wants[k].text ? ": " : "", wants[k].text ? wants[k].text : "");
		if (strstr(wants[k].fixture, "idle"))
			CHECK(!alarms && c.out.n == 8, "the twin: no alarm on its 8 GPUs (%d)", alarms);
		else
			CHECK(alarms == 4, "the planted fault: 4 warnings, one per slowed GPU (%d)", alarms);
		done(&x, &c);
	}
	return unit_done();
}
