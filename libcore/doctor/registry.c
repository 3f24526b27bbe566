/* gpup2p doctor — the registry of check families, selection, the runner and the summary. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "gpup2p/clock.h"
#include "check.h"

/* Add a family: one file in libcore/doctor/ and one line here. */
const struct gp_doctor_family *const gp_doctor_families[] = {
	&gp_doctor_fam_driver, &gp_doctor_fam_gpu, &gp_doctor_fam_bar, &gp_doctor_fam_iommu, &gp_doctor_fam_acs,
	&gp_doctor_fam_pcie, &gp_doctor_fam_topo, &gp_doctor_fam_numa, &gp_doctor_fam_nvlink, &gp_doctor_fam_p2p,
	&gp_doctor_fam_peermem, &gp_doctor_fam_rdma, &gp_doctor_fam_nic, &gp_doctor_fam_kmod, &gp_doctor_fam_limits,
	&gp_doctor_fam_expect,
};
const int gp_doctor_nfamilies = (int)(sizeof(gp_doctor_families) / sizeof(gp_doctor_families[0]));

int gp_doctor_count(void)
{
	int n = 0;

	for (int f = 0; f < gp_doctor_nfamilies; f++)
		n += gp_doctor_families[f]->n;
	return n;
}

const struct gp_doctor_check *gp_doctor_at(int i)
{
	for (int f = 0; f < gp_doctor_nfamilies && i >= 0; f++) {
		if (i < gp_doctor_families[f]->n)
			return &gp_doctor_families[f]->checks[i];
		i -= gp_doctor_families[f]->n;
	}
	return NULL;
}

const struct gp_doctor_check *gp_doctor_find(const char *id)
{
	for (int i = 0, n = gp_doctor_count(); i < n; i++)
		if (!strcmp(gp_doctor_at(i)->id, id))
			return gp_doctor_at(i);
	return NULL;
}

const struct gp_doctor_family *gp_doctor_family(const char *name)
{
	size_t l = strcspn(name, ".");

	for (int f = 0; f < gp_doctor_nfamilies; f++)
		if (strlen(gp_doctor_families[f]->name) == l && !strncmp(gp_doctor_families[f]->name, name, l))
			return gp_doctor_families[f];
	return NULL;
}

const char *gp_doctor_sources_str(unsigned mask, char *buf, size_t n)
{
	static const char *const names[] = { "sysfs", "cfg", "proc", "nvml", "cuda", "verbs", "dev", "process", "kmsg" };
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (mask & (1u << i) && used < n)
			used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "," : "", names[i]);
	return buf;
}

const char *gp_doctor_check_sources(const struct gp_doctor_check *k, char *buf, size_t n)
{
	char opt[128], *save = NULL;
	size_t used;

	gp_doctor_sources_str(k->sources & 0xffffu, buf, n);
	gp_doctor_sources_str(GP_SRC_OPTIONAL(k->sources) & ~k->sources, opt, sizeof(opt));
	used = strlen(buf);
	for (char *s = strtok_r(opt, ",", &save); s && used < n; s = strtok_r(NULL, ",", &save))
		used += (size_t)snprintf(buf + used, n - used, "%s%s?", used ? "," : "", s);
	return buf;
}

const char *gp_sev_name(enum gp_sev s)
{
	static const char *const n[GP_SEV_N] = { "error", "warning", "info", "ok", "unknown", "skipped" };

	return (unsigned)s < GP_SEV_N ? n[s] : "?";
}

/* Mark the checks a comma list names with val; unknown names are a usage error. */
static int mark(unsigned char *on, const char *list, unsigned char val, const char *opt, struct gp_err *e)
{
	char *dup = strdup(list), *save = NULL, *t;
	int rc = 0, n = gp_doctor_count();

	if (!dup)
		return gp_err_set(e, GP_E_FAIL, ENOMEM, "out of memory");
	for (t = strtok_r(dup, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		size_t l = strlen(t);
		int fam = !strchr(t, '.') || (l > 2 && !strcmp(t + l - 2, ".*"));
		int hit = 0;

		for (int i = 0; i < n; i++) {
			const char *id = gp_doctor_at(i)->id;

			if (fam ? (!strncmp(id, t, strcspn(t, ".")) && id[strcspn(t, ".")] == '.') : !strcmp(id, t)) {
				on[i] = val;
				hit = 1;
			}
		}
		if (!hit)
			rc = gp_err_set(e, GP_E_USAGE, EINVAL, "%s: no check or family '%s' (gpup2p doctor --list shows them)",
					opt, t);
	}
	free(dup);
	return rc;
}

int gp_doctor_select(unsigned char *on, const char *only, const char *skip, struct gp_err *e)
{
	int n = gp_doctor_count(), rc;

	memset(on, only ? 0 : 1, (size_t)n);
	if (only && (rc = mark(on, only, 1, "--only", e)))
		return rc;
	return skip ? mark(on, skip, 0, "--skip", e) : 0;
}

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
	gp_doctor_p2p_free(c);
	gp_doctor_expect_free(c);
	free(c->verbs_probe);
	c->verbs_probe = NULL;
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
			gp_doctor_add(c, GP_SEV_SKIPPED, "system", "not run: --no-cuda (the check asks libcuda)");
		else if ((k->sources & GP_SRC_LIVE_ONLY) && !c->root->live && !c->probe_libs)
			gp_doctor_add(c, GP_SEV_SKIPPED, "system", "live only: not available under --root %s", c->root->dir);
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

const struct gp_pci_dev *gp_doctor_dev(const struct gp_doctor_ctx *c, int i)
{
	return &c->pci->devs[c->topo->devs[i].pci];
}

int gp_doctor_nic_near(const struct gp_doctor_ctx *c, int g)
{
	for (int j = 0; j < c->topo->n; j++)
		if (c->topo->devs[j].kind == GP_TOPO_NIC && gp_topo_link_at(c->topo, g, j).pcie <= GP_TC_PHB)
			return 1;
	return 0;
}

int gp_doctor_rdma_nics(const struct gp_doctor_ctx *c)
{
	int n = 0;

	for (int i = 0; i < c->topo->n; i++)
		n += c->topo->devs[i].kind == GP_TOPO_NIC && gp_doctor_dev(c, i)->rdma[0];
	return n;
}

int gp_doctor_rdma_hw_nics(const struct gp_doctor_ctx *c)
{
	char path[160];
	int n = 0;

	for (int i = 0; i < c->topo->n; i++) {
		const char *rdma = gp_doctor_dev(c, i)->rdma;

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", rdma);
		n += c->topo->devs[i].kind == GP_TOPO_NIC && rdma[0] && gp_root_exists(c->root, path);
	}
	return n;
}

int gp_doctor_does_p2p(const struct gp_doctor_ctx *c)
{
	return c->topo->ngpu >= 2 || (c->topo->ngpu >= 1 && c->topo->nnic >= 1);
}

int gp_doctor_no_gpu(struct gp_doctor_ctx *c)
{
	if (c->topo->ngpu)
		return 0;
	gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no NVIDIA GPU on the PCI bus");
	return 1;
}

int gp_doctor_no_device(struct gp_doctor_ctx *c)
{
	if (c->topo->n)
		return 0;
	gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no GPU or NIC on the PCI bus");
	return 1;
}

int gp_doctor_nvml_recorded(const struct gp_doctor_ctx *c)
{
	/* gpu.c's loader says "no NVML facts recorded under the root" when the file is missing; a file
	 * that records "unavailable REASON" keeps what the live system answered */
	return c->root->live || c->facts->available || !strstr(c->facts->why, "no NVML facts recorded");
}

int gp_doctor_no_nvml(struct gp_doctor_ctx *c, const char *subject)
{
	struct gp_finding *f;

	if (c->facts->available)
		return 0;
	if (gp_doctor_nvml_recorded(c))
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, subject, "NVML not available%s: %s", c->root->live ? "" : " (recorded)",
				  c->facts->why);
	else
		f = gp_doctor_add(c, GP_SEV_SKIPPED, subject, "no NVML facts recorded under the root %s", c->root->dir);
	gp_finding_ev(f, "nvml", "%s", c->facts->why);
	return 1;
}

int gp_doctor_gpu_excluded(struct gp_doctor_ctx *c, const char *bdf)
{
	char path[128], buf[2048];
	const char *p;
	long n;

	snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", bdf);
	n = gp_doctor_read(c, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (!(p = strstr(buf, "GPU Excluded:")))
		return 2;
	p += 13;
	p += strspn(p, " \t");
	return !strncmp(p, "Yes", 3);
}

int gp_doctor_geforce(const struct gp_doctor_ctx *c, int i)
{
	const struct gp_gpu_info *g = c->facts->available ? gp_gpu_find(c->facts, gp_doctor_dev(c, i)->bdf) : NULL;

	return g && strcasestr(g->name, "geforce") != NULL;
}

const struct gp_gpu_info *gp_doctor_gpu_nvml(struct gp_doctor_ctx *c, int i)
{
	const struct gp_pci_dev *d = gp_doctor_dev(c, i);
	const struct gp_gpu_info *g = gp_gpu_find(c->facts, d->bdf);
	struct gp_finding *f;

	if (g)
		return g;
	if (strcmp(d->driver, "nvidia"))
		f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s is bound to %s, not nvidia (see driver.gpu_bound)",
				  c->topo->devs[i].name, d->driver[0] ? d->driver : "no driver");
	else if (gp_doctor_gpu_excluded(c, d->bdf) == 1)
		f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s is excluded by the driver (see gpu.excluded)",
				  c->topo->devs[i].name);
	else
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, d->bdf, "%s is not in NVML's list (see gpu.visible)", c->topo->devs[i].name);
	gp_finding_bdf(f, d->bdf);
	return NULL;
}

int gp_doctor_state_missing(struct gp_doctor_ctx *c, int i, long long v, const char *what)
{
	const struct gp_pci_dev *d = gp_doctor_dev(c, i);
	const char *name = c->topo->devs[i].name;
	struct gp_finding *f;

	if (v >= 0)
		return 0;
	if (v == GP_GPU_NA)
		f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s: no %s (not supported by this GPU or driver)", name, what);
	else if (c->root->live)
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, d->bdf, "%s: NVML did not report the %s", name, what);
	else
		f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s: the %s is not recorded in the snapshot (taken by an "
				  "older gpup2p, or NVML did not answer)", name, what);
	gp_finding_bdf(f, d->bdf);
	return 1;
}

void gp_doctor_each_nvml_gpu(struct gp_doctor_ctx *c,
			     void (*one)(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g))
{
	if (gp_doctor_no_gpu(c) || gp_doctor_no_nvml(c, "system"))
		return;
	for (int i = 0; i < c->topo->ngpu; i++) {
		const struct gp_gpu_info *g = gp_doctor_gpu_nvml(c, i);

		if (g)
			one(c, i, g);
	}
}
