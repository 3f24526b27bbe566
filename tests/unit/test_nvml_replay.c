/* Unit tests: a real machine replayed. tests/fixtures/h200x4-hgx is a healthy 4×H200 (NV18 through
 * NVSwitch); NVML's test double replays what its NVML answered (FAKENVML_PROBE: the counters, which on
 * Hopper rise at idle for CRC data while replay, recovery and CRC flit stay 0, and what each call
 * cost). Checked: what topo and doctor ask NVML, counted and costed on the double's own clock; that
 * nvlink.errors raises no alarm there, live or on the machine's own snapshot (facts format 1: one sum);
 * that a counter that does count, rising, is named. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "doctor_fx.h"
#include "gpup2p/gpu_p2p.h"

#define SNAP "h200x4-hgx/snapshot"
#define NGPU 4
#define LINKS 18
#define HOPPER_COUNTERS 3 /* replay, recovery, CRC flit */

static const char *const bus[NGPU] = { "0000:00:06.0", "0000:00:07.0", "0000:00:08.0", "0000:00:09.0" };

static unsigned long long (*calls)(const char *);
static unsigned long long (*cost_ns)(int);
static unsigned long long (*counter_reads)(int);
static void (*reset)(void);

/* The double, loaded by path first (its soname makes gpup2p's dlopen("libnvidia-ml.so.1") find it),
 * replaying the machine. NULL when it cannot load (a failed check). */
static void *load_double(void)
{
	char path[1024], probe[8192];
	const char *fx = getenv("GPUP2P_FIXTURES");
	void *lib;

	/* the 4x H200's counters and call costs, and what nvmlDeviceGetFieldValues costs per run of one
	 * link's fields, measured on 2x H200 (on 2x H100, tests/fixtures/h100x2-nvml, 15 ms a call link by
	 * link: the same 0.8 ms a run) */
	snprintf(probe, sizeof(probe), "%s:tests/fixtures/h200x2-nvml/nvml_fieldorder.txt",
		 unit_fixture("h200x4-hgx/vendor/nvml_probe.txt"));
	setenv("FAKENVML_PROBE", probe, 1);
	setenv("FAKENVML_BUSIDS", "0000:00:06.0,0000:00:07.0,0000:00:08.0,0000:00:09.0", 1);
	unsetenv("FAKENVML_GPUS");
	snprintf(path, sizeof(path), "%s/../tests/fakenvml/libnvidia-ml.so.1", fx ? fx : "build/fixtures");
	lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	CHECK(lib != NULL, "the NVML test double loads (%s)", lib ? path : dlerror());
	if (!lib)
		return NULL;
	*(void **)&calls = dlsym(lib, "fakenvml_calls");
	*(void **)&cost_ns = dlsym(lib, "fakenvml_cost_ns");
	*(void **)&counter_reads = dlsym(lib, "fakenvml_counter_reads");
	*(void **)&reset = dlsym(lib, "fakenvml_reset");
	CHECK(calls && cost_ns && counter_reads && reset, "the double's clock can be read");
	if (!calls || !cost_ns || !counter_reads || !reset) {
		dlclose(lib);
		return NULL;
	}
	return lib;
}

/* The replay itself: the recorded counters rise as recorded (GPU0's CRC data +22 between two reads,
 * its replays not at all), so a check that summed them would warn on this healthy machine. */
static void replayed(void *lib)
{
	int (*err)(void *, unsigned, int, unsigned long long *);
	unsigned long long first = 0, second = 0, v, replay = 0;
	void *gpu0 = (void *)0x10000;

	*(void **)&err = dlsym(lib, "nvmlDeviceGetNvLinkErrorCounter");
	reset();
	for (unsigned l = 0; err && l < LINKS; l++) {
		first += err(gpu0, l, 3, &v) == 0 ? v : 0;
		replay += err(gpu0, l, 0, &v) == 0 ? v : 0;
	}
	for (unsigned l = 0; err && l < LINKS; l++)
		second += err(gpu0, l, 3, &v) == 0 ? v : 0;
	CHECK(second == 399 && second - first == 22 && replay == 0, "the double replays GPU0's DL_CRC_DATA: 377 "
	      "then 399 (+22) over its 18 links, DL_REPLAY 0 (%llu, %llu, %llu)", first, second, replay);
}

/* Simulated wall time of a read: calls on no GPU, plus the slowest GPU (one thread each). */
static double wall_ms(double *serial_ms)
{
	double most = 0;

	*serial_ms = (double)cost_ns(-1) / 1e6;
	for (int g = 0; g < NGPU; g++) {
		double ms = (double)cost_ns(g) / 1e6;

		most = ms > most ? ms : most;
		*serial_ms += ms;
	}
	return (double)cost_ns(-1) / 1e6 + most;
}

/* topo: identity, links and state, no counter. */
static void topo_reads(void)
{
	static struct gp_gpu_facts f;
	struct gp_err e = { 0 };
	double serial, wall;
	int rc, ok = 1;

	reset();
	rc = gp_gpu_nvml_read(&f, 0, &e);
	CHECK(rc == 0 && f.available && f.n == NGPU, "topo's read: 4 GPUs (rc %d, n %d: %s)", rc, f.n, e.msg);
	for (int i = 0; i < NGPU; i++)
		for (int j = i + 1; j < NGPU; j++)
			ok &= gp_gpu_nvlinks(&f, bus[i], bus[j]) == LINKS;
	CHECK(ok, "NV18 between every pair (through NVSwitch)");
	CHECK(calls("GetNvLinkErrorCounter") == 0 && calls("GetPcieReplayCounter") == 0 && calls("GetP2PStatus") == 0,
	      "topo reads no NVLink error counter, no PCIe replay counter, no P2P status (%llu, %llu, %llu calls)",
	      calls("GetNvLinkErrorCounter"), calls("GetPcieReplayCounter"), calls("GetP2PStatus"));
	CHECK(f.n > 0 && f.gpus[0].st.nvl_err[GP_NVL_REPLAY] == GP_GPU_UNKNOWN && f.gpus[0].st.replay == GP_GPU_UNKNOWN,
	      "... and leaves them unknown");
	wall = wall_ms(&serial);
	CHECK(wall < 40, "topo's NVML time on the recorded costs: %.1f ms with a thread per GPU (%.1f ms one after "
	      "the other)", wall, serial);
}

/* doctor: the counters too, of the links that are up, only those Hopper counts, twice. */
static void doctor_reads(void)
{
	static struct gp_gpu_facts f;
	struct gp_err e = { 0 };
	long long up = 0;
	double serial, wall;
	int rc, quiet = 1;

	reset();
	rc = gp_gpu_nvml_read(&f, GP_GPU_HEALTH, &e);
	CHECK(rc == 0 && f.n == NGPU, "doctor's read: 4 GPUs (rc %d: %s)", rc, e.msg);
	for (int i = 0; i < f.n; i++) {
		const struct gp_gpu_state *s = &f.gpus[i].st;

		up += s->nvl_active > 0 ? s->nvl_active : 0;
		quiet &= s->arch == GP_GPU_ARCH_HOPPER && s->nvl_err[GP_NVL_REPLAY] == 0 &&
			 s->nvl_err_rise[GP_NVL_REPLAY] == 0 && s->nvl_err[GP_NVL_RECOVERY] == 0 &&
			 s->nvl_err[GP_NVL_CRC_FLIT] == 0 && s->nvl_err[GP_NVL_CRC_DATA] == GP_GPU_UNKNOWN;
	}
	CHECK(up == NGPU * LINKS, "72 links up (%lld)", up);
	CHECK(calls("GetFieldValues") == NGPU && calls("GetNvLinkErrorCounter") == 0,
	      "one nvmlDeviceGetFieldValues per GPU, one read (replay, recovery and CRC flit 0 in the links' life: "
	      "nothing to rise from), no counter asked link by link (%llu, %llu calls)", calls("GetFieldValues"),
	      calls("GetNvLinkErrorCounter"));
	CHECK(calls("GetFieldValuesRun") == (unsigned long long)up, "... asking the driver once per link up "
	      "(the fields link by link: %llu runs for %lld links up; counter by counter would be 3x)",
	      calls("GetFieldValuesRun"), up);
	CHECK(counter_reads(0) == (unsigned long long)up && counter_reads(2) == (unsigned long long)up,
	      "... each of them the links up x 3 counters (replay %llu, CRC flit %llu reads of %lld links up, once)",
	      counter_reads(0), counter_reads(2), up);
	CHECK(calls("GetPcieReplayCounter") == 2 * NGPU, "the PCIe replay counter read twice per GPU (%llu calls)",
	      calls("GetPcieReplayCounter"));
	CHECK(counter_reads(3) == 0 && counter_reads(4) == 0, "CRC data and ECC data never read on Hopper (%llu, %llu)",
	      counter_reads(3), counter_reads(4));
	CHECK(quiet, "every GPU: Hopper, replay, recovery and CRC flit 0 and not rising, CRC data not read");
	wall = wall_ms(&serial);
	/* On the 4x H200 (2026-11-26, tests/perf/nvml_serial.c, results/nvml-serial-h200x4-*.txt) NVML calls
	 * on four threads took as long as one after the other (200 vs 180 ms) and all of them lengthen cuInit
	 * by their own time: the driver serialises them. doctor's budget over cuInit is 150 ms, so the sum counts. */
	CHECK(wall < 150 && serial < 150, "doctor's NVML time on the recorded costs: %.1f ms one after the other "
	      "(%.1f ms with a thread per GPU)", serial, wall);
}

/* p2p.nvml_status: every pair once, 4 capabilities (nvmlInit 21 ms, then 1.7 ms a call), the answer
 * stored both ways; the driver answers one call at a time, so the calls add up: 6 pairs x 4 x 1.7 ms
 * = 41 ms on 4 GPUs after nvmlInit (both orders of every pair would be 82). */
static void p2p_reads(void)
{
	static struct gp_gpu_p2p p;
	char bdf[NGPU][GP_BDF_LEN];
	double serial;
	int ok = 1;

	for (int i = 0; i < NGPU; i++)
		snprintf(bdf[i], sizeof(bdf[i]), "%s", bus[i]);
	unsetenv("GPUP2P_LIBNVML");
	reset();
	gp_gpu_p2p_query((const char (*)[GP_BDF_LEN])bdf, NGPU, &p);
	for (int i = 0; i < NGPU; i++)
		for (int j = 0; j < NGPU; j++)
			for (int k = 0; k < GP_P2P_NCAPS; k++)
				ok &= i == j || (p.st[i][j][k] == 0 && p.st[j][i][k] == 0);
	CHECK(p.available && ok, "P2P status OK for every pair both ways, as nvidia-smi topo -p2p r, w, n and a say (%s)",
	      p.why);
	(void)wall_ms(&serial);
	CHECK(calls("GetP2PStatus") == NGPU * (NGPU - 1) / 2 * GP_P2P_NCAPS && serial < 21 + 45, "%llu P2P status "
	      "calls: %.1f ms with nvmlInit's 21 (both orders: 103)", calls("GetP2PStatus"), serial);
}

/* doctor --only nvlink.errors with the facts read from the replayed machine. */
static void live_setup(struct fx *x, struct gp_doctor_ctx *c)
{
	struct gp_err e = { 0 };

	(void)c;
	x->r.live = 1;
	CHECK(gp_gpu_nvml_read(&x->f, GP_GPU_HEALTH, &e) == 0 && x->f.n == NGPU, "the facts, live from the double");
}

static int count_sev(const struct gp_doctor_ctx *c, enum gp_sev sev)
{
	int n = 0;

	for (int i = 0; i < c->out.n; i++)
		n += c->out.v[i].sev == sev;
	return n;
}

static void nvlink_errors(void)
{
	struct gp_doctor_ctx c;
	struct fx x;
	const char *v;

	if (!run_sel(SNAP, live_setup, "nvlink.errors", NULL, &x, &c)) {
		v = ev_of(&c, "nvlink.errors", bus[0], "nvlink CRC flit errors");
		CHECK(count_sev(&c, GP_SEV_OK) == NGPU && c.out.n == NGPU, "live: no NVLink error on any GPU (%d ok of %d)",
		      count_sev(&c, GP_SEV_OK), c.out.n);
		CHECK(v && !strcmp(v, "0"), "the evidence names each counter: 0, read once (%s)", v ? v : "none");
		CHECK(!ev_of(&c, "nvlink.errors", bus[0], "nvlink CRC data errors"), "CRC data is no evidence on Hopper");
		done(&x, &c);
	}
	/* the machine's own snapshot, written by 2b10afa: nvlink_errors=481 nvlink_errors_rise=1 (a sum with
	 * CRC data): not evidence */
	if (!run_sel(SNAP, NULL, "nvlink.errors", NULL, &x, &c)) {
		CHECK(count_sev(&c, GP_SEV_SKIPPED) == NGPU && c.out.n == NGPU, "offline on facts format 1: skipped, never a "
		      "warning (%d skipped of %d)", count_sev(&c, GP_SEV_SKIPPED), c.out.n);
		done(&x, &c);
	}
	/* a counter that counts, rising: a warning naming it */
	if (!run_sel(D("nvlink-errors"), NULL, "nvlink.errors", NULL, &x, &c)) {
		int named = 0;

		for (int i = 0; i < c.out.n; i++)
			named += c.out.v[i].sev == GP_SEV_WARNING && strstr(c.out.v[i].message, "(replay +7)") != NULL;
		CHECK(named == 1, "GPU6's replays rose by 7: one warning that says so");
		done(&x, &c);
	}
}

/* gpu.throttle on the replayed machine: NVML's clock event reasons as it answered them (idle alone,
 * vendor/q.txt), recorded into the facts and judged ok on every GPU. */
static void throttle(void)
{
	struct gp_doctor_ctx c;
	struct fx x;
	const char *v;

	if (run_sel(SNAP, live_setup, "gpu.throttle", NULL, &x, &c))
		return;
	v = ev_of(&c, "gpu.throttle", bus[0], "clock event reasons");
	CHECK(count_sev(&c, GP_SEV_OK) == NGPU && c.out.n == NGPU, "live: no slowdown on any GPU (%d ok of %d)",
	      count_sev(&c, GP_SEV_OK), c.out.n);
	CHECK(v && !strcmp(v, "0x1 (idle)"), "the reasons as recorded: idle alone (%s)", v ? v : "none");
	CHECK(x.f.gpus[0].st.clk_reasons == 1, "recorded into the facts: clk_reasons=1 (%lld)", x.f.gpus[0].st.clk_reasons);
	done(&x, &c);
}

int main(void)
{
	void *lib = load_double();

	if (lib) {
		replayed(lib);
		topo_reads();
		doctor_reads();
		p2p_reads();
		nvlink_errors();
		throttle();
	}
	unsetenv("FAKENVML_PROBE");
	unsetenv("FAKENVML_BUSIDS");
	return unit_done();
}
