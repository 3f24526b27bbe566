/* gpup2p — when clearing ACS would undo isolation: the IOMMU translating (or not known not to), or
 * VFIO owning a device. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpup2p/acs_write.h"
#include "gpup2p/iommu.h"

/* 1 when function d is what a change of bridge (or multi-function device function) b governs: below
 * the bridge, or a function of the same device. Ports do not start DMA: they are not counted. */
static int governed(const struct gp_pci *p, int b, const struct gp_pci_dev *d)
{
	const struct gp_pci_dev *br = &p->devs[b];

	if (d->is_bridge)
		return 0;
	if (!br->is_bridge)
		return d->domain == br->domain && d->bus == br->bus && d->dev == br->dev;
	for (int k = 0; k < d->chain_len; k++)
		if (d->chain_idx[k] == b)
			return 1;
	return 0;
}

/* Why an IOMMU group of unknown type counts as unsafe: its type file is missing (kernels before 5.11
 * have none) or unreadable, so the IOMMU may translate for d (intel_iommu=on without iommu=pt). The
 * reasons here say what stands in the way, never the option that would override it (the caller's). */
static void unknown_why(const struct gp_pci *p, const struct gp_pci_dev *d, const char *where, char *why, size_t n)
{
	char path[64], type[64];
	ssize_t rc;

	snprintf(path, sizeof(path), "/sys/kernel/iommu_groups/%d/type", d->iommu_group);
	rc = gp_root_read_text(p->root, path, type, sizeof(type));
	snprintf(why, n, "whether the IOMMU translates for %s %s is unknown (%s: %s), and if it does, its peer "
		 "requests would skip the translation", d->bdf, where, path,
		 rc < 0 ? gp_root_strerror((int)-rc) : rc == 0 ? "empty" : "a type not known here");
}

/* Why clearing ACS on bridge b is unsafe for function d, into why; 0 when it is not, else
 * GP_ACS_UNSAFE_VFIO or GP_ACS_UNSAFE_IOMMU. */
static int unsafe(const struct gp_pci *p, int b, const struct gp_pci_dev *d, char *why, size_t n)
{
	enum gp_iommu_mode m = gp_iommu_group_mode(p->root, d->iommu_group);
	const char *where = p->devs[b].is_bridge ? "below it" : "of that device";

	if (!strcmp(d->driver, "vfio-pci"))
		snprintf(why, n, "%s %s is bound to vfio-pci, and a guest's device could then reach another's memory",
			 d->bdf, where);
	else if (m == GP_IOMMU_UNMANAGED)
		snprintf(why, n, "%s %s is in IOMMU group %d, owned by a user-space driver (VFIO), and a guest's device "
			 "could then reach another's memory", d->bdf, where, d->iommu_group);
	else if (m == GP_IOMMU_DMA || m == GP_IOMMU_DMA_FQ)
		snprintf(why, n, "the IOMMU translates (%s) for %s %s, whose peer requests would then skip the "
			 "translation and could reach the wrong memory",
			 gp_iommu_mode_name(m), d->bdf, where);
	else if (m == GP_IOMMU_UNKNOWN && d->iommu_group >= 0)
		unknown_why(p, d, where, why, n);
	else
		return 0;
	return !strcmp(d->driver, "vfio-pci") || m == GP_IOMMU_UNMANAGED ? GP_ACS_UNSAFE_VFIO : GP_ACS_UNSAFE_IOMMU;
}

int gp_acs_bridge_unsafe(const struct gp_pci *p, int b, char *why, size_t n)
{
	int kind = 0;

	for (int k = 0; k < p->n; k++) {
		char w[384];
		int u = governed(p, b, &p->devs[k]) ? unsafe(p, b, &p->devs[k], w, sizeof(w)) : 0;

		if (u > kind) {                     /* VFIO first: iommu=pt does not help there */
			kind = u;
			snprintf(why, n, "%s", w);
		}
	}
	return kind;
}

int gp_acs_plan_check(const struct gp_pci *p, const struct gp_acs_plan *pl, struct gp_err *e)
{
	char why[384] = "", more_s[48] = "";
	const char *first = NULL;
	int more = 0, kind = 0;

	for (int i = 0; i < pl->n; i++) {
		const struct gp_acs_change *c = &pl->c[i];
		char w[384];
		int bad = 0;

		if (c->before == c->after)
			continue;
		for (int k = 0; k < p->n && !bad; k++)
			bad = governed(p, c->pci, &p->devs[k]) ? unsafe(p, c->pci, &p->devs[k], w, sizeof(w)) : 0;
		if (!bad)
			continue;
		if (first) {
			more++;
			continue;
		}
		first = c->bdf;
		kind = bad;
		snprintf(why, sizeof(why), "%s", w);
	}
	if (!first)
		return 0;
	if (more)
		snprintf(more_s, sizeof(more_s), " (and %d more bridge%s)", more, more > 1 ? "s" : "");
	gp_err_set(e, GP_E_USAGE, EPERM, "refusing to clear ACS on %s%s: %s%s", first, more_s, why,
		   kind == GP_ACS_UNSAFE_IOMMU ? "; boot with iommu=pt" : "");
	return kind;
}
