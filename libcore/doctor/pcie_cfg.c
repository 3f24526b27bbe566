/* gpup2p doctor — pcie.mps, pcie.relaxed_ordering and pcie.replay: what config space and NVML say
 * about the GPUs' and NICs' links beyond their width and speed (doctor/pcie.c holds those, the AER
 * counters and the family's table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcie.h"

#define DEVCTL_RO 0x0010          /* Device Control: Enable Relaxed Ordering */

/* Max Payload Size of a function in bytes: 0 no PCIe capability, -1 config space not readable. */
static int mps_of(const struct gp_pci_dev *d)
{
	int64_t ctl;

	if (d->pcie_cap == 0)
		return 0;
	if (d->pcie_cap < 0 || (ctl = gp_pci_cfg_read(d, d->pcie_cap + 8, 2)) < 0)
		return -1;
	return 128 << ((ctl >> 5) & 7);
}

/* What the walk along the paths of one GPU found. */
struct mps_walk {
	int *seen;               /* per PCI function */
	int ref;                 /* the GPU's MPS */
	int unknown;             /* a function's MPS could not be read */
	char diff[512];          /* the functions whose MPS differs: "NIC0 0000:15:00.0 128 B" */
	int ndiff, diffidx[GP_CHAIN_MAX * 4];
};

static void mps_visit(const struct gp_doctor_ctx *c, int idx, struct mps_walk *w)
{
	const struct gp_pci_dev *d = &c->pci->devs[idx];
	int m;
	char item[64];

	if (idx < 0 || w->seen[idx]++)
		return;
	m = mps_of(d);
	w->unknown |= m < 0;
	if (m <= 0 || m == w->ref)
		return;
	snprintf(item, sizeof(item), "%s %s %d B", gp_doctor_pcie_role(c, idx), d->bdf, m);
	gp_doctor_pcie_append(w->diff, sizeof(w->diff), item);
	if (w->ndiff < (int)(sizeof(w->diffidx) / sizeof(w->diffidx[0])))
		w->diffidx[w->ndiff++] = idx;
}

/* Walk every path from GPU g to a NIC on its host bridge; returns how many NICs that is. */
static int mps_walk(const struct gp_doctor_ctx *c, int g, struct mps_walk *w)
{
	const struct gp_pci_dev *gd = gp_doctor_dev(c, g);
	int near = 0;

	memset(w->seen, 0, sizeof(*w->seen) * (size_t)c->pci->n);
	w->ref = mps_of(gd);
	w->unknown = w->ref < 0;
	w->diff[0] = '\0';
	w->ndiff = 0;
	for (int j = c->topo->ngpu; j < c->topo->n; j++) {
		const struct gp_pci_dev *nd = gp_doctor_dev(c, j);

		if (gp_topo_link_at(c->topo, g, j).pcie > GP_TC_PHB)
			continue;
		near++;
		mps_visit(c, c->topo->devs[j].pci, w);
		for (int k = 0; k < nd->chain_len; k++)
			mps_visit(c, nd->chain_idx[k], w);
		for (int k = 0; k < gd->chain_len; k++)
			mps_visit(c, gd->chain_idx[k], w);
	}
	return near;
}

void gp_doctor_pcie_mps(struct gp_doctor_ctx *c)
{
	struct mps_walk w = { .seen = calloc((size_t)c->pci->n + 1, sizeof(int)) };
	int pairs = 0;

	for (int g = 0; w.seen && g < c->topo->ngpu; g++) {
		const struct gp_pci_dev *gd = gp_doctor_dev(c, g);
		const char *name = c->topo->devs[g].name;
		int near = mps_walk(c, g, &w);
		struct gp_finding *f;

		if (!near)
			continue; /* no NIC on this GPU's host bridge: no GPUDirect path to look at */
		pairs += near;
		if (w.diff[0]) {
			f = gp_doctor_add(c, GP_SEV_INFO, gd->bdf, "%s: Max Payload Size differs on the paths to its NICs: %d B "
					  "here, %s", name, w.ref, w.diff);
			gp_finding_fix(f, "usually harmless (the kernel keeps each link consistent); to make it uniform, boot "
				       "with pci=pcie_bus_perf (or pci=pcie_bus_peer2peer, 128 B everywhere)");
			gp_finding_ev(f, "differs", "%s", w.diff);
		} else if (w.unknown) {
			f = c->root->live ? gp_doctor_add(c, GP_SEV_UNKNOWN, gd->bdf, "%s: Max Payload Size unknown on a path "
							  "to a NIC: config space not readable (run as root)", name)
					  : gp_doctor_add(c, GP_SEV_SKIPPED, gd->bdf, "%s: Max Payload Size not in the root "
							  "(config space captured as non-root)", name);
		} else {
			f = gp_doctor_add(c, GP_SEV_OK, gd->bdf, "%s: Max Payload Size %d B on every path to its %d nearby "
					  "NIC%s", name, w.ref, near, near > 1 ? "s" : "");
		}
		gp_finding_bdf(f, gd->bdf);
		for (int k = 0; k < w.ndiff; k++)
			gp_finding_bdf(f, c->pci->devs[w.diffidx[k]].bdf);
		if (w.ref > 0)
			gp_finding_ev(f, "mps", "%d B", w.ref);
	}
	if (!pairs)
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "%s", !c->topo->ngpu ? "no NVIDIA GPU"
								 : !c->topo->nnic ? "no NIC"
								 : "no GPU shares a host bridge with a NIC");
	free(w.seen);
}

/* Root ports under which the kernel turns Relaxed Ordering off (drivers/pci/quirks.c:
 * quirk_relaxedordering_disable): Intel Xeon E5 v3/v4 (Haswell-EP, Broadwell-EP), AMD A1100. */
static int ro_erratum(const struct gp_pci_dev *rp)
{
	return (rp->vendor == 0x8086 && ((rp->device >= 0x2f01 && rp->device <= 0x2f0e) ||
					 (rp->device >= 0x6f01 && rp->device <= 0x6f0e))) ||
	       (rp->vendor == 0x1022 && rp->device >= 0x1a00 && rp->device <= 0x1a02);
}

void gp_doctor_pcie_ro(struct gp_doctor_ctx *c)
{
	if (!c->topo->nnic) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no NIC");
		return;
	}
	for (int j = c->topo->ngpu; j < c->topo->n; j++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, j);
		const struct gp_pci_dev *rp = d->chain_len && d->chain_idx[0] >= 0 ? &c->pci->devs[d->chain_idx[0]] : NULL;
		const char *name = c->topo->devs[j].name;
		int64_t ctl = d->pcie_cap > 0 ? gp_pci_cfg_read(d, d->pcie_cap + 8, 2) : -1;
		struct gp_finding *f;

		if (ctl < 0 && d->pcie_cap != 0) {
			f = c->root->live ? gp_doctor_add(c, GP_SEV_UNKNOWN, d->bdf, "%s: Device Control not readable (run as "
							  "root)", name)
					  : gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s: Device Control not in the root "
							  "(config space captured as non-root)", name);
		} else if (ctl < 0) {
			f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s: not a PCIe function", name);
		} else if (ctl & DEVCTL_RO) {
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s: Relaxed Ordering enabled", name);
		} else if (rp && ro_erratum(rp)) {
			f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s: Relaxed Ordering off, as the kernel sets it below root "
					  "port %s (%04x:%04x, which mishandles it)", name, rp->bdf, rp->vendor, rp->device);
		} else {
			f = gp_doctor_add(c, GP_SEV_INFO, d->bdf, "%s: Relaxed Ordering disabled: the NIC's writes into GPU "
					  "memory are strictly ordered, which costs GPUDirect RDMA bandwidth on some platforms "
					  "(AMD EPYC, virtual machines)", name);
			gp_finding_fix(f, "setpci -s %s CAP_EXP+8.w=0010:0010 (until reboot; the firmware or a driver "
				       "cleared it: check the BIOS's PCIe Relaxed Ordering option)", d->bdf);
		}
		gp_finding_bdf(f, d->bdf);
		if (ctl >= 0)
			gp_finding_ev(f, "DevCtl", "0x%04x (RlxdOrd%c)", (unsigned)ctl, ctl & DEVCTL_RO ? '+' : '-');
	}
}

static void replay_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	const char *name = c->topo->devs[i].name;
	const struct gp_gpu_state *s;
	struct gp_finding *f;

	if (gp_doctor_state_missing(c, i, g->st.replay, "PCIe replay counter"))
		return;
	s = gp_doctor_counters(c, g);
	if (s->replay_rise > 0) {
		f = gp_doctor_add(c, GP_SEV_WARNING, g->bdf, "%s: PCIe replay counter at %lld and rising (+%lld between "
				  "two reads): the link retransmits now, a marginal link", name, s->replay,
				  s->replay_rise);
		gp_finding_fix(f, "reseat the GPU, check its riser/cable and retimer; lower the slot's speed in "
			       "firmware if it persists");
	} else if (s->replay > 0) {
		/* replays happen now and then on a sound link; only a rising count is a fault */
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: %lld PCIe replay%s since the driver loaded, not rising "
				  "(a count that grows between runs would mean a marginal link)", name, s->replay,
				  s->replay > 1 ? "s" : "");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: no PCIe replay", name);
	}
	gp_finding_bdf(f, g->bdf);
	gp_finding_ev(f, "nvml replay counter", "%lld", s->replay);
	if (s->replay_rise >= 0)
		gp_finding_ev(f, "rise between two reads", "%lld", s->replay_rise);
}

void gp_doctor_pcie_replay(struct gp_doctor_ctx *c)
{
	gp_doctor_each_nvml_gpu(c, replay_one);
}
