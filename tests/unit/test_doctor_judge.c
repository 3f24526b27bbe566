/* Unit tests: doctor's judgement against the classes of issue 26, each a planted fault and its healthy
 * twin in tests/fixtures/doctor/: the right object, the right severity, and quiet on the twin. The
 * expectations were worked out from the spec lines, not copied from output. */
#include "doctor_fx.h"

enum want { FIRE, QUIET, NOT };

struct jcase {
	const char *fixture;
	void (*setup)(struct fx *x, struct gp_doctor_ctx *c);
	const char *id;
	enum want kind;
	enum gp_sev sev;          /* FIRE / NOT: a finding of this severity ... */
	const char *subject;      /* ... on this subject (NULL: any); NOT: none such */
	const char *text;         /* FIRE: in the message or fix too (NULL: not asked) */
};

/* 7. rdma.errors and rdma.flaps read the counters twice when live. On a copy of a fixture,
 * the test double of the pause between the reads (which makes doctor read a fixture twice) writes the second read's values, as a failing link
 * changes them, and records the pause asked for (its own clock: nothing sleeps); the set-up writes the
 * first read's values (the cases share the copy). */
struct ibwrite {
	const char *file, *first, *second;
};
static const struct ibwrite *ib_plan;
static int ib_nplan;
static double ib_paused = -1;
static char rise_dir[512], roce_dir[512];

static void ib_write(const char *root, const char *file, const char *val)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/class/infiniband/mlx5_0/ports/1/%s", root, file);
	if (!(f = fopen(path, "w"))) {
		CHECK(0, "%s can be written", path);
		return;
	}
	fprintf(f, "%s\n", val);
	fclose(f);
}

static void ib_pause(struct gp_doctor_ctx *c, double s)
{
	ib_paused = s;
	for (int i = 0; i < ib_nplan; i++)
		ib_write(c->root->dir, ib_plan[i].file, ib_plan[i].second);
}

static void ib_live(struct fx *x, struct gp_doctor_ctx *c, const struct ibwrite *plan, int n, int active)
{
	(void)x;
	c->active = active;
	c->counter_pause = ib_pause;
	ib_plan = plan;
	ib_nplan = n;
	ib_paused = -1;
	for (int i = 0; i < n; i++)
		ib_write(c->root->dir, plan[i].file, plan[i].first);
}

static const struct ibwrite rise[] = { { "counters/symbol_error", "7", "14" }, { "counters/link_downed", "1", "2" } };
static const struct ibwrite steady[] = { { "counters/symbol_error", "7", "7" }, { "counters/link_downed", "1", "1" } };
static const struct ibwrite roce[] = { { "hw_counters/out_of_sequence", "5210", "5388" } };

static void rise_setup(struct fx *x, struct gp_doctor_ctx *c)
{
	ib_live(x, c, rise, 2, 0);
}

static void steady_setup(struct fx *x, struct gp_doctor_ctx *c)
{
	ib_live(x, c, steady, 2, 0);
}

static void roce_setup(struct fx *x, struct gp_doctor_ctx *c)
{
	ib_live(x, c, roce, 1, 0);
}

static void rise_active_setup(struct fx *x, struct gp_doctor_ctx *c)
{
	ib_live(x, c, rise, 2, 1);
}

/* 11. p2p.geforce live: CUDA (the test double) allows P2P between the fixture's GPUs, or refuses it; or
 * libcuda is a file named for another driver version (a copy of the double, libcuda.so.550.90.07). */
static char libcuda_dir[512];

static void gf_cuda(struct fx *x, struct gp_doctor_ctx *c, const char *nopeer)
{
	c->probe_libs = 1;
	cuda_lib(NULL, NULL);
	unit_p2p_env(&x->t, nopeer, NULL, NULL, NULL);
}

static void gf_claim(struct fx *x, struct gp_doctor_ctx *c)
{
	gf_cuda(x, c, NULL);
}

static void gf_refuse(struct fx *x, struct gp_doctor_ctx *c)
{
	gf_cuda(x, c, "1");
}

static void gf_libcuda(struct fx *x, struct gp_doctor_ctx *c)
{
	char lib[600];

	gf_cuda(x, c, NULL);
	snprintf(lib, sizeof(lib), "%s/libcuda.so.1", libcuda_dir);
	setenv("GPUP2P_LIBCUDA", lib, 1);
}

static const struct jcase cases[] = {
	/* 1. nvlink.down: each GPU by its own links */
	{ D("nvlink-half"), NULL, "nvlink.down", FIRE, GP_SEV_ERROR, "0000:13:00.0", "2 NVLinks down" },
	{ D("nvlink-half"), NULL, "nvlink.down", FIRE, GP_SEV_ERROR, "0000:14:00.0", "2 NVLinks down" },
	{ D("nvlink-half"), NULL, "nvlink.down", FIRE, GP_SEV_ERROR, "0000:93:00.0", "1 NVLink down" },
	{ D("nvlink-half"), NULL, "nvlink.down", FIRE, GP_SEV_OK, "0000:94:00.0", NULL },  /* its end is up */
	{ D("nvlink-half"), NULL, "nvlink.down", FIRE, GP_SEV_OK, "0000:33:00.0", "no NVLink in use" },
	{ D("nvlink-bridged"), NULL, "nvlink.down", QUIET, 0, NULL, NULL },
	{ D("nvlink-down"), NULL, "nvlink.down", FIRE, GP_SEV_ERROR, "0000:34:00.0", "2 NVLinks down" },
	/* 2. ACS redirect on a root port: warning when the IOMMU translates, info with pass-through */
	{ D("acs-rootport-dma"), NULL, "acs.redirect", FIRE, GP_SEV_WARNING, "0000:10:01.0", "GPU0-GPU2 NODE" },
	{ D("acs-rootport-dma"), NULL, "acs.redirect", FIRE, GP_SEV_WARNING, "0000:10:01.0", "through the IOMMU" },
	{ D("acs-rootport-dma"), NULL, "acs.redirect", NOT, GP_SEV_ERROR, NULL, NULL },
	{ D("acs-rootport-pt"), NULL, "acs.redirect", FIRE, GP_SEV_INFO, "0000:10:01.0", NULL },
	{ D("acs-rootport-pt"), NULL, "acs.redirect", NOT, GP_SEV_WARNING, NULL, NULL },
	{ D("acs-rootport"), NULL, "acs.redirect", NOT, GP_SEV_WARNING, NULL, NULL },  /* no IOMMU, NVLink */
	/* 3. bar.small by what the GPU's Resizable BAR offers and what here needs it */
	{ D("bar-norebar"), NULL, "bar.small", FIRE, GP_SEV_INFO, "0000:03:00.0", "capability is absent" },
	{ D("bar-norebar"), NULL, "bar.small", FIRE, GP_SEV_INFO, "0000:04:00.0", "tops out at this size" },
	{ D("bar-norebar"), NULL, "bar.small", FIRE, GP_SEV_INFO, "0000:03:00.0", "nothing to enable in firmware" },
	{ D("bar-norebar"), NULL, "bar.small", NOT, GP_SEV_WARNING, NULL, NULL },
	{ D("bar-norebar"), NULL, "bar.rebar", NOT, GP_SEV_WARNING, NULL, NULL },
	{ D("bar-geforce"), NULL, "bar.small", FIRE, GP_SEV_WARNING, "0000:03:00.0", "offers up to 32G" },
	{ "workstation", NULL, "bar.small", FIRE, GP_SEV_INFO, "0000:03:00.0", "nothing here needs more" },
	{ D("bar-small"), NULL, "bar.small", FIRE, GP_SEV_ERROR, "0000:13:00.0", "offers up to 128G" },
	/* 4. a link held low by Link Control 2 is no idle GPU */
	{ D("pcie-gpu-held"), NULL, "pcie.link_speed", FIRE, GP_SEV_WARNING, "0000:13:00.0",
	  "Target Link Speed Gen1 on 0000:12:00.0" },
	{ D("pcie-gpu-held"), NULL, "pcie.link_speed", FIRE, GP_SEV_WARNING, "0000:13:00.0",
	  "setpci -s 0000:12:00.0 CAP_EXP+30.w=5:f" },
	{ D("pcie-gpu-held"), NULL, "pcie.link_speed", FIRE, GP_SEV_WARNING, "0000:94:00.0",
	  "HW Autonomous Speed Disable on 0000:94:00.0" },
	{ D("pcie-gpu-held"), NULL, "pcie.link_speed", FIRE, GP_SEV_WARNING, "0000:94:00.0",
	  "setpci -s 0000:94:00.0 CAP_EXP+30.w=0:20" },
	{ D("pcie-gpu-free"), NULL, "pcie.link_speed", FIRE, GP_SEV_INFO, "0000:13:00.0", "idle GPU" },
	{ D("pcie-gpu-free"), NULL, "pcie.link_speed", NOT, GP_SEV_WARNING, NULL, NULL },
	/* 5. fixes that fit the installed driver */
	{ D("pm-missing-r460"), NULL, "peermem.missing", FIRE, GP_SEV_WARNING, "nvidia_peermem", "modprobe nv_peer_mem" },
	{ D("pm-missing"), NULL, "peermem.missing", FIRE, GP_SEV_WARNING, "nvidia_peermem", "modprobe nvidia-peermem" },
	/* 6. facts a snapshot records: the capturing process's limits, the GPU names NVML gave */
	{ D("lim-snap-container"), NULL, "limits.memlock", FIRE, GP_SEV_WARNING, "RLIMIT_MEMLOCK", "--ulimit memlock=-1" },
	{ D("lim-snap-container"), NULL, "limits.memlock", FIRE, GP_SEV_WARNING, "RLIMIT_MEMLOCK", "inside a container" },
	{ D("lim-snap-container"), NULL, "limits.shm", FIRE, GP_SEV_WARNING, "/dev/shm", "--shm-size=16g" },
	{ D("lim-snap"), NULL, "limits.memlock", QUIET, 0, NULL, NULL },
	{ D("lim-snap"), NULL, "limits.shm", QUIET, 0, NULL, NULL },
	{ D("lim-snap-old"), NULL, "limits.memlock", FIRE, GP_SEV_SKIPPED, "RLIMIT_MEMLOCK", "no process limits recorded" },
	{ D("lim-snap-old"), NULL, "limits.shm", FIRE, GP_SEV_SKIPPED, "/dev/shm", NULL },
	{ D("gdr-geforce"), NULL, "rdma.gdr", FIRE, GP_SEV_WARNING, "0000:13:00.0-mlx5_0", "name NVML recorded" },
	{ D("healthy"), NULL, "rdma.gdr", NOT, GP_SEV_WARNING, NULL, NULL },
	/* 9. ECC health: a repair waiting for a reset is an error, uncorrected errors counted a warning */
	{ D("gpu-ecc-unc"), NULL, "gpu.ecc", FIRE, GP_SEV_WARNING, "0000:33:00.0", "3 uncorrected ECC errors" },
	{ D("gpu-ecc-unc"), NULL, "gpu.ecc", FIRE, GP_SEV_ERROR, "0000:34:00.0", "reset the GPU when idle" },
	{ D("gpu-ecc-unc"), NULL, "gpu.ecc", NOT, GP_SEV_WARNING, "0000:34:00.0", NULL },
	{ D("gpu-ecc-clean"), NULL, "gpu.ecc", QUIET, 0, NULL, NULL },
	{ D("gpu-ecc-clean"), NULL, "gpu.ecc", FIRE, GP_SEV_OK, "0000:33:00.0", "no uncorrected ECC error" },
	/* 7. RDMA port health: error counters rising between two reads, or high since they were cleared */
	{ rise_dir, rise_setup, "rdma.errors", FIRE, GP_SEV_WARNING, "mlx5_0/1", "symbol_error +7 (now 14)" },
	{ rise_dir, rise_setup, "rdma.errors", FIRE, GP_SEV_WARNING, "mlx5_0/1", "perfquery -x -C mlx5_0 -P 1" },
	{ rise_dir, rise_setup, "rdma.errors", FIRE, GP_SEV_OK, "mlx5_1/1", "read twice" },
	{ rise_dir, rise_setup, "rdma.flaps", FIRE, GP_SEV_WARNING, "mlx5_0/1", "link_downed +1 (now 2)" },
	{ rise_dir, steady_setup, "rdma.errors", FIRE, GP_SEV_INFO, "mlx5_0/1", "not rising" },
	{ rise_dir, steady_setup, "rdma.errors", NOT, GP_SEV_WARNING, NULL, NULL },
	{ rise_dir, steady_setup, "rdma.flaps", NOT, GP_SEV_WARNING, NULL, NULL },
	{ roce_dir, roce_setup, "rdma.errors", FIRE, GP_SEV_WARNING, "mlx5_0/1", "out_of_sequence +178 (now 5388)" },
	{ roce_dir, roce_setup, "rdma.errors", FIRE, GP_SEV_WARNING, "mlx5_0/1", "mlnx_qos" },
	{ D("rdma-errors"), NULL, "rdma.errors", FIRE, GP_SEV_WARNING, "mlx5_0/1", "symbol_error 340, port_rcv_errors 27" },
	{ D("rdma-errors"), NULL, "rdma.errors", FIRE, GP_SEV_WARNING, "mlx5_0/1", "one read offline" },
	{ D("rdma-errors"), NULL, "rdma.errors", FIRE, GP_SEV_INFO, "mlx5_1/1", "symbol_error 3 " },
	{ D("rdma-errors"), NULL, "rdma.errors", NOT, GP_SEV_WARNING, "mlx5_1/1", NULL },
	{ D("rdma-errors-sat"), NULL, "rdma.errors", FIRE, GP_SEV_WARNING, "mlx5_0/1", "a counter saturated" },
	{ D("rdma-flaps"), NULL, "rdma.flaps", FIRE, GP_SEV_WARNING, "mlx5_0/1", "link_downed 9, link_error_recovery 14" },
	{ D("rdma-flaps"), NULL, "rdma.flaps", FIRE, GP_SEV_WARNING, "mlx5_1/1", "retraining now" },
	{ D("rdma-flaps"), NULL, "rdma.flaps", FIRE, GP_SEV_INFO, "mlx5_2/1", "link_downed 1 " },
	{ D("rdma-roce-loss"), NULL, "rdma.errors", FIRE, GP_SEV_INFO, "mlx5_0/1", "mlnx_qos -i ibp21s0" },
	{ D("rdma-roce-loss"), NULL, "rdma.errors", NOT, GP_SEV_WARNING, NULL, NULL },
	{ D("healthy"), NULL, "rdma.errors", QUIET, 0, NULL, NULL },
	{ D("healthy"), NULL, "rdma.flaps", QUIET, 0, NULL, NULL },
	{ D("rdma-roce"), NULL, "rdma.errors", QUIET, 0, NULL, NULL },
	{ D("lim-snap-old"), NULL, "rdma.errors", FIRE, GP_SEV_SKIPPED, "system", "older gpup2p" },
	/* 11. GeForce P2P readiness: each unmet condition its own finding; the ready twin quiet */
	{ D("gf-ready"), NULL, "p2p.geforce", QUIET, 0, NULL, NULL },
	{ D("gf-ready"), NULL, "p2p.geforce", FIRE, GP_SEV_OK, "system", "Only gpup2p doctor --active" },
	{ D("gf-ready"), gf_claim, "p2p.geforce", FIRE, GP_SEV_OK, "system", "CUDA reports P2P" },
	{ D("gf-ready"), gf_refuse, "p2p.geforce", FIRE, GP_SEV_INFO, "nvidia", "not a P2P-enabled branch" },
	{ D("gf-ready"), gf_libcuda, "p2p.geforce", FIRE, GP_SEV_ERROR, "nvidia", "libcuda is 550.90.07" },
	{ D("gf-proprietary"), NULL, "p2p.geforce", FIRE, GP_SEV_INFO, "nvidia", "proprietary kernel module" },
	{ D("gf-proprietary"), NULL, "p2p.geforce", FIRE, GP_SEV_INFO, "nvidia", "550.54.15-p2p" },
	{ D("gf-nvbuild"), NULL, "p2p.geforce", FIRE, GP_SEV_INFO, "nvidia", "dvs-builder" },
	{ D("gf-mismatch"), NULL, "p2p.geforce", FIRE, GP_SEV_ERROR, "nvidia", "user-space driver (NVML) is 550.90.07" },
	{ D("gf-smallbar"), NULL, "p2p.geforce", FIRE, GP_SEV_INFO, "0000:03:00.0", "offers up to 32G" },
	{ D("gf-smallbar"), NULL, "p2p.geforce", FIRE, GP_SEV_INFO, "0000:04:00.0", "BAR1 256M is smaller" },
	{ D("gf-smallbar"), gf_claim, "p2p.geforce", FIRE, GP_SEV_WARNING, "0000:03:00.0", "copies may fail" },
	{ D("gf-iommu"), NULL, "p2p.geforce", FIRE, GP_SEV_INFO, "iommu", "iommu=pt" },
	{ D("gf-iommu"), gf_claim, "p2p.geforce", FIRE, GP_SEV_WARNING, "iommu", "GPU0 GPU1 (DMA-FQ)" },
	{ D("gf-mixed"), NULL, "p2p.geforce", FIRE, GP_SEV_INFO, "system", "Ada: GPU0; Ampere: GPU1" },
	{ D("gf-mixed"), NULL, "p2p.geforce", NOT, GP_SEV_OK, NULL, NULL },
	{ D("healthy"), NULL, "p2p.geforce", FIRE, GP_SEV_SKIPPED, "system", "no GeForce GPU" },
};
#define NCASES (int)(sizeof(cases) / sizeof(cases[0]))

static int has_text(const struct gp_finding *f, const char *text)
{
	return !text || strstr(f->message, text) || (f->fix && strstr(f->fix, text));
}

static void check_case(const struct jcase *k)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	int ok = 0, alarm = 0, match = 0;

	if (run_sel(k->fixture, k->setup, k->id, NULL, &x, &c))
		return;
	for (int i = 0; i < c.out.n; i++) {
		const struct gp_finding *f = &c.out.v[i];

		if (strcmp(f->check->id, k->id))
			continue;
		ok += f->sev == GP_SEV_OK;
		alarm += f->sev <= GP_SEV_INFO || f->sev == GP_SEV_UNKNOWN;
		match += f->sev == k->sev && (!k->subject || !strcmp(f->subject, k->subject)) && has_text(f, k->text);
	}
	if (k->kind == QUIET)
		CHECK(ok > 0 && !alarm, "%s stays quiet on %s (%d ok, %d alarms)", k->id, k->fixture, ok, alarm);
	else if (k->kind == NOT)
		CHECK(!match, "%s does not say %s on %s about %s", k->id, gp_sev_name(k->sev), k->fixture,
		      k->subject ? k->subject : "anything");
	else
		CHECK(match > 0, "%s says %s on %s about %s%s%s", k->id, gp_sev_name(k->sev), k->fixture,
		      k->subject ? k->subject : "something", k->text ? ": " : "", k->text ? k->text : "");
	done(&x, &c);
}

/* A healthy twin: no error and no warning from any check. */
static void healthy(const char *fixture)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	int sum[GP_SEV_N];

	if (run_sel(fixture, NULL, NULL, NULL, &x, &c))
		return;
	gp_doctor_summary(&c.out, sum);
	for (int i = 0; i < c.out.n; i++)
		if (c.out.v[i].sev <= GP_SEV_WARNING)
			printf("# %s: %s %s: %s\n", fixture, c.out.v[i].check->id, c.out.v[i].subject, c.out.v[i].message);
	CHECK(sum[GP_SEV_ERROR] == 0 && sum[GP_SEV_WARNING] == 0, "%s: no error, no warning (%d, %d)", fixture,
	      sum[GP_SEV_ERROR], sum[GP_SEV_WARNING]);
	done(&x, &c);
}

/* The pause between the two reads: none for the static doctor (as pcie.replay's reads), the rest of
 * GP_DOCTOR_COUNTER_WINDOW_S under --active. */
static void counter_window(void)
{
	static struct fx x;
	struct gp_doctor_ctx c;

	if (!run_sel(rise_dir, rise_active_setup, "rdma.errors", NULL, &x, &c)) {
		CHECK(ib_paused > 0 && ib_paused <= GP_DOCTOR_COUNTER_WINDOW_S, "--active: the reads are up to %.1f s "
		      "apart (pause %.3f s)", GP_DOCTOR_COUNTER_WINDOW_S, ib_paused);
		done(&x, &c);
	}
	if (!run_sel(rise_dir, rise_setup, "rdma.errors", NULL, &x, &c)) {
		CHECK(ib_paused == 0, "static: the reads back to back (pause %.3f s)", ib_paused);
		done(&x, &c);
	}
}

/* Private copies of the fixtures whose counter files the cases rewrite, and of the libcuda double under
 * a versioned name. */
static int copy_fixtures(char *tmp)
{
	char cmd[2048];

	if (!mkdtemp(tmp))
		return -1;
	snprintf(rise_dir, sizeof(rise_dir), "%s/rdma-rise", tmp);
	snprintf(roce_dir, sizeof(roce_dir), "%s/rdma-roce-loss", tmp);
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", unit_fixture(D("rdma-rise")), rise_dir); /* one static buffer */
	if (system(cmd))
		return -1;
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", unit_fixture(D("rdma-roce-loss")), roce_dir);
	if (system(cmd))
		return -1;
	snprintf(libcuda_dir, sizeof(libcuda_dir), "%s/lib", tmp);
	snprintf(cmd, sizeof(cmd), "mkdir '%s' && cp '%s/../tests/fakecuda/libcuda.so.1' '%s/libcuda.so.550.90.07' && "
		 "ln -s libcuda.so.550.90.07 '%s/libcuda.so.1'", libcuda_dir, getenv("GPUP2P_FIXTURES") ?
		 getenv("GPUP2P_FIXTURES") : "build/fixtures", libcuda_dir, libcuda_dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	char tmp[] = "/tmp/gpup2p-judge-XXXXXX", cmd[128];

	CHECK(!copy_fixtures(tmp), "copies of rdma-rise, rdma-roce-loss and the libcuda double in %s", tmp);
	for (int i = 0; i < NCASES; i++)
		check_case(&cases[i]);
	healthy(D("nvlink-bridged"));
	healthy(D("acs-rootport-pt"));
	healthy(D("pcie-gpu-free"));
	healthy(D("lim-snap"));
	healthy(D("gpu-ecc-clean"));
	healthy(D("rdma-rise"));
	healthy(D("rdma-roce"));
	healthy(D("gf-ready"));
	counter_window();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		printf("# %s left behind\n", tmp);
	return unit_done();
}
