/* gpup2p doctor — what the families share: devices of the topology, NICs near a GPU, the NVML facts of
 * a GPU and the verdicts when they are missing (check.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rdma.h"

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

int gp_doctor_rdma_hw_nics(struct gp_doctor_ctx *c)
{
	char path[160];
	int n = gp_doctor_ib_hw_nics(c); /* the RDMA devices read once (doctor/rdma_facts.c) */

	if (n >= 0)
		return n;
	n = 0;
	for (int i = 0; i < c->topo->n; i++) { /* out of memory there: each asked */
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
