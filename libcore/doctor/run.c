/* gpup2p doctor — the context's life and the run: what every check reads (snapshot marker, IOMMU, ACS
 * audit, BARs, the process's limits), each selected check run in turn and timed, each family's cleanup,
 * the summary and the exit code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "gpup2p/clock.h"
#include "check.h"

/* Process facts of a snapshot: those its capturing process recorded (none in older markers). */
static void proc_recorded(struct gp_doctor_ctx *c, const struct gp_snapshot_info *s)
{
	c->proc.recorded = 1;
	c->proc.euid = -1;
	c->proc.known = s->memlock_known;
	c->proc.memlock = s->memlock;
	c->proc.shm_known = s->shm_known;
	c->proc.shm_size = s->shm_size;
	c->proc.container = s->container;
	snprintf(c->proc.container_why, sizeof(c->proc.container_why), "%s", s->container_why);
}

int gp_doctor_ctx_init(struct gp_doctor_ctx *c, const struct gp_root *r, const struct gp_pci *p,
		       const struct gp_gpu_facts *f, const struct gp_topo *t, struct gp_err *e)
{
	memset(c, 0, sizeof(*c));
	c->root = r;
	c->pci = p;
	c->facts = f;
	c->topo = t;
	c->src.live = r->live;
	c->probe_libs = r->live;
	c->src.nvml = f->available;
	snprintf(c->src.nvml_why, sizeof(c->src.nvml_why), "%s", f->available ? "" : f->why);
	snprintf(c->src.cuda_why, sizeof(c->src.cuda_why), "%s", r->live ? "not loaded: driver.cuda_init not run"
										 : "not loaded: offline");
	c->src.snapshot = gp_snapshot_info_read(r, &c->src.snap) == 0;
	if (c->src.snapshot)
		proc_recorded(c, &c->src.snap);
	gp_iommu_read(r, &c->iommu);
	c->bar = calloc((size_t)t->n + 1, sizeof(*c->bar));
	if (!c->bar || gp_acs_audit(t, &c->acs)) {
		free(c->bar);
		c->bar = NULL;
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	}
	c->acs_ok = 1;
	for (int i = 0; i < t->n; i++)
		gp_bar_report(&p->devs[t->devs[i].pci], f, &c->bar[i]);
	return 0;
}

void gp_doctor_proc_read(struct gp_doctor_ctx *c)
{
	struct rlimit rl;
	struct statvfs sv;

	if (!c->root->live)
		return;
	c->proc.known = 1;
	c->proc.container = gp_snapshot_container(c->root, c->proc.container_why, sizeof(c->proc.container_why));
	c->proc.euid = (int)geteuid();
	c->proc.memlock = getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (uint64_t)rl.rlim_cur
											       : UINT64_MAX;
	if (statvfs("/dev/shm", &sv) == 0) {
		c->proc.shm_known = 1;
		c->proc.shm_size = (uint64_t)sv.f_blocks * sv.f_frsize;
	}
}

void gp_doctor_ctx_free(struct gp_doctor_ctx *c)
{
	if (c->acs_ok)
		gp_acs_audit_free(&c->acs);
	c->acs_ok = 0;
	free(c->bar);
	c->bar = NULL;
	free(c->cuda_probe);
	c->cuda_probe = NULL;
	gp_doctor_prefetch_free(c->pre);
	c->pre = NULL;
	for (int i = 0; i < gp_doctor_nfamilies; i++) /* what each family kept */
		if (gp_doctor_families[i]->cleanup)
			gp_doctor_families[i]->cleanup(c);
	gp_findings_free(&c->out);
	gp_doctor_sys_free(c);
	free(c->check_ms);
	c->check_ms = NULL;
	free(c->counters);
	c->counters = NULL;
}

int gp_doctor_run(struct gp_doctor_ctx *c, const unsigned char *on, struct gp_err *e)
{
	double t0;
	int n = gp_doctor_count();

	c->cuda_wanted = !c->no_cuda && gp_doctor_wants(on, c->active, GP_SRC_CUDA, NULL);
	free(c->check_ms);
	c->check_ms = calloc((size_t)n, sizeof(*c->check_ms));
	for (int i = 0; i < n; i++) {
		const struct gp_doctor_check *k = gp_doctor_at(i);
		int before = c->out.n;

		if (on && !on[i])
			continue;
		c->cur = k;
		t0 = (gp_clock_s() * 1e3);
		if (k->active && !c->active)
			gp_doctor_add(c, GP_SEV_SKIPPED, "system", "not requested: an active check (moves data); "
				      "gpup2p doctor --active runs it");
		else if (c->no_cuda && (k->sources & GP_SRC_CUDA))
			gp_doctor_add(c, GP_SEV_SKIPPED, "system", "not run: gpup2p doctor --no-cuda "
				      "(the check asks libcuda)");
		else if ((k->sources & GP_SRC_LIVE_ONLY) && !c->root->live && !c->probe_libs)
			gp_doctor_add(c, GP_SEV_SKIPPED, "system", "live only: not available offline (root %s)", c->root->dir);
		else
			k->run(c);
		if (c->out.n == before)
			gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "the check gave no verdict (a bug in gpup2p: please report it)");
		if (c->check_ms)
			c->check_ms[i] = (gp_clock_s() * 1e3) - t0;
		c->cur = NULL;
	}
	return c->out.nomem ? gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory") : 0;
}

void gp_doctor_summary(const struct gp_findings *f, int sum[GP_SEV_N])
{
	memset(sum, 0, sizeof(int) * GP_SEV_N);
	for (int i = 0; i < f->n; i++)
		sum[f->v[i].sev]++;
}

int gp_doctor_exit_code(const int sum[GP_SEV_N], int strict)
{
	if (sum[GP_SEV_ERROR])
		return 2;
	if (sum[GP_SEV_WARNING] || (strict && sum[GP_SEV_UNKNOWN]))
		return 1;
	return 0;
}

/* --- helpers shared by the families ---------------------------------------------------------- */
