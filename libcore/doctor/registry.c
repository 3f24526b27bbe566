/* gpup2p doctor — the registry: the check families, finding a check, selecting them (--only, --skip).
 * The run and the context are in run.c, what the families share in helpers.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static int mark(unsigned char *on, const char *list, unsigned char val, struct gp_err *e)
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
			rc = gp_err_set(e, GP_E_USAGE, EINVAL, "no check or family '%s'", t);
	}
	free(dup);
	return rc;
}

int gp_doctor_select(unsigned char *on, const char *only, const char *skip, struct gp_err *e)
{
	int n = gp_doctor_count(), rc;

	memset(on, only ? 0 : 1, (size_t)n);
	if (only && (rc = mark(on, only, 1, e)))
		return rc;
	return skip ? mark(on, skip, 0, e) : 0;
}
