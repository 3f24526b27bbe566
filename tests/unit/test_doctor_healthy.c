/* Unit tests: doctor on healthy fixtures: no error, no warning, and every check gives a verdict (the
 * registry's cases, each check firing and quiet: test_doctor). (Moved here from test_doctor.) */
#include "doctor/check.h"
#include "doctor_fx.h"

/* A healthy machine: no error, no warning, and every check gave a verdict. */
static void healthy(const char *fixture)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	int sum[GP_SEV_N], verdicts = 1;

	if (run_sel(fixture, NULL, NULL, NULL, &x, &c)) {
		CHECK(0, "%s loads", fixture);
		return;
	}
	gp_doctor_summary(&c.out, sum);
	for (int i = 0; i < c.out.n; i++) {
		if (c.out.v[i].sev <= GP_SEV_WARNING)
			printf("# %s: %s %s: %s\n", fixture, c.out.v[i].check->id, c.out.v[i].subject, c.out.v[i].message);
		if (strstr(c.out.v[i].message, "no verdict"))
			verdicts = 0;
	}
	CHECK(sum[GP_SEV_ERROR] == 0 && sum[GP_SEV_WARNING] == 0, "%s: no error, no warning (%d, %d)", fixture,
	      sum[GP_SEV_ERROR], sum[GP_SEV_WARNING]);
	CHECK(verdicts, "%s: every check gave a verdict", fixture);
	CHECK(gp_doctor_exit_code(sum, 0) == 0, "%s: exit 0", fixture);
	done(&x, &c);
}

int main(void)
{
	healthy(D("healthy"));
	healthy(D("iommu-pt"));
	healthy(D("kmod-loaded"));
	healthy(D("pcie-gpu-idle"));   /* idle GPUs at Gen1: info, never a warning */
	healthy(D("gpu-mig"));
	healthy(D("rdma-far"));        /* a RoCE NIC far from the GPUs, up */
	healthy(D("rdma-roce"));
	healthy(D("acs-rootport"));    /* redirect on a root port of NODE/SYS/NVLink pairs: info, never an error */
	healthy(D("acs-boot-unit"));
	healthy("h200x2");
	return unit_done();
}
