/* gpup2p doctor — iommu.*: translation in the way of peer traffic, a kernel command line that
 * disagrees with what is registered, IOMMU groups shared with other endpoints, devices owned by VFIO.
 * The IOMMU state is libcore/iommu.c's (read once into c->iommu). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "gpup2p/buf.h"

static int translated(enum gp_iommu_mode m)
{
	return m == GP_IOMMU_DMA || m == GP_IOMMU_DMA_FQ;
}

int gp_doctor_translated(const struct gp_doctor_ctx *c, int i)
{
	const struct gp_pci_dev *d = gp_doctor_dev(c, i);
	enum gp_iommu_mode m = d->iommu_group >= 0 ? gp_iommu_group_mode(c->root, d->iommu_group) : GP_IOMMU_UNKNOWN;

	if (m == GP_IOMMU_UNKNOWN && c->iommu.mode != GP_IOMMU_MIXED)
		m = c->iommu.mode;
	return translated(m);
}

static void check_mode(struct gp_doctor_ctx *c)
{
	enum gp_iommu_mode sys = c->iommu.mode;
	struct gp_buf list = GP_BUF_INIT; /* every translated GPU and NIC, however many */
	int n = 0;
	struct gp_finding *f;

	for (int i = 0; i < c->topo->n; i++) {
		if (gp_doctor_translated(c, i)) {
			n++;
			gp_buf_addf(&list, "%s%s", list.len ? ", " : "", c->topo->devs[i].name);
		}
	}
	if (sys == GP_IOMMU_OFF) {
		f = gp_doctor_add(c, GP_SEV_OK, "system", "no IOMMU registered: devices reach each other at physical addresses");
	} else if (n || translated(sys)) {
		int p2p = gp_doctor_does_p2p(c);

		f = gp_doctor_add(c, p2p ? GP_SEV_WARNING : GP_SEV_INFO, "system",
				  "the IOMMU translates DMA (%s)%s%s%s: peer-to-peer and GPUDirect traffic is translated or "
				  "blocked", gp_iommu_mode_name(sys), n ? " for " : "", gp_buf_str(&list), p2p ? "" : " (one device: no P2P here)");
		for (int i = 0; i < c->topo->n; i++)
			if (gp_doctor_translated(c, i))
				gp_finding_bdf(f, gp_doctor_dev(c, i)->bdf);
		gp_finding_fix(f, "boot with iommu=pt (identity for host drivers; VFIO keeps working), then reboot");
	} else if (sys == GP_IOMMU_UNKNOWN) {
		if (c->root->live)
			f = gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "IOMMU groups present but their type is not readable");
		else
			f = gp_doctor_add(c, GP_SEV_SKIPPED, "system", "IOMMU group types not in the root (not captured)");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "system", "IOMMU in %s mode: no translation for the GPUs and NICs",
				  gp_iommu_mode_name(sys));
	}
	gp_finding_ev(f, "iommu", "%s, %d units, %d groups", gp_iommu_mode_name(sys), c->iommu.units, c->iommu.groups);
	gp_buf_free(&list);
}

static void check_cmdline(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;

	if (!gp_root_exists(c->root, "/proc/cmdline")) {
		gp_doctor_missing(c, "system", "/proc/cmdline", -ENOENT);
		return;
	}
	if (c->iommu.note[0]) {
		f = gp_doctor_add(c, GP_SEV_WARNING, "system", "%s", c->iommu.note);
		gp_finding_fix(f, c->iommu.mode == GP_IOMMU_OFF
				  ? "enable VT-d / AMD-Vi (IOMMU) in firmware, or drop the IOMMU option from the command line"
				  : "drop the option or make it match the firmware setting");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "system", "the command line agrees with the IOMMU state (%s)",
				  c->iommu.cmdline[0] ? c->iommu.cmdline : "no IOMMU options");
	}
	gp_finding_ev(f, "/proc/cmdline", "%s", c->iommu.cmdline[0] ? c->iommu.cmdline : "no IOMMU options");
	gp_finding_ev(f, "iommu", "%s", gp_iommu_mode_name(c->iommu.mode));
}

static void check_group_shared(struct gp_doctor_ctx *c)
{
	int any = 0;

	for (int i = 0; i < c->topo->ngpu; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);
		struct gp_buf list = GP_BUF_INIT; /* a group without ACS may hold a whole switch, VFs included */
		struct gp_finding *f;

		if (d->iommu_group < 0)
			continue;
		any = 1;
		for (int k = 0; k < c->pci->n; k++) {
			const struct gp_pci_dev *o = &c->pci->devs[k];

			/* bridges and the GPU's own functions (its audio function) belong with it */
			if (o == d || o->is_bridge || o->iommu_group != d->iommu_group ||
			    (o->domain == d->domain && o->bus == d->bus && o->dev == d->dev))
				continue;
			gp_buf_addf(&list, "%s%s", list.len ? ", " : "", o->bdf);
		}
		if (list.len) {
			f = gp_doctor_add(c, GP_SEV_INFO, d->bdf, "%s shares IOMMU group %d with %s: VFIO must take them "
					  "together", c->topo->devs[i].name, d->iommu_group, gp_buf_str(&list));
			gp_finding_fix(f, "to give the GPU alone to a VM, put it behind a port with ACS (another slot)");
			gp_finding_ev(f, "iommu_group", "%d: %s", d->iommu_group, gp_buf_str(&list));
		} else {
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s is alone in IOMMU group %d", c->topo->devs[i].name,
					  d->iommu_group);
		}
		gp_finding_bdf(f, d->bdf);
		gp_buf_free(&list);
	}
	if (!any)
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", c->topo->ngpu ? "no IOMMU groups" : "no NVIDIA GPU on the PCI bus");
}

static void check_vfio(struct gp_doctor_ctx *c)
{
	if (gp_doctor_no_device(c))
		return;
	for (int i = 0; i < c->topo->n; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);
		int unmanaged = d->iommu_group >= 0 && gp_iommu_group_mode(c->root, d->iommu_group) == GP_IOMMU_UNMANAGED;
		struct gp_finding *f;

		if (!strcmp(d->driver, "vfio-pci") || unmanaged) {
			f = gp_doctor_add(c, GP_SEV_INFO, d->bdf, "%s is owned by VFIO (%s): a VM or user-space driver has it, "
					  "not this host", c->topo->devs[i].name, unmanaged ? "group unmanaged" : "vfio-pci");
			gp_finding_ev(f, "driver", "%s", d->driver[0] ? d->driver : "none");
		} else {
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s is not owned by VFIO", c->topo->devs[i].name);
		}
		gp_finding_bdf(f, d->bdf);
	}
}

static const struct gp_doctor_check checks[] = {
	{ "iommu.mode", "the IOMMU translates DMA on a machine doing P2P or GPUDirect", GP_SRC_SYSFS, 0, check_mode,
	  "Reads /sys/class/iommu and each IOMMU group's type. Warning when GPUs or NICs sit in translated groups "
	  "(DMA, DMA-FQ) on a machine with two GPUs or a GPU and a NIC: peer writes are translated or blocked. "
	  "Info with a single device. Fix: iommu=pt." },
	{ "iommu.cmdline", "the command line asks for an IOMMU that is not there, or the reverse", GP_SRC_PROC | GP_SRC_SYSFS,
	  0, check_cmdline,
	  "Compares the IOMMU options of /proc/cmdline (intel_iommu=, amd_iommu=, iommu=) with the registered units. "
	  "Warning when the line asks for an IOMMU none registered (firmware VT-d/AMD-Vi off), or turns it off "
	  "while units are registered." },
	{ "iommu.group_shared", "a GPU shares its IOMMU group with other endpoints", GP_SRC_SYSFS, 0, check_group_shared,
	  "Reads the IOMMU groups. Info when a GPU's group holds endpoints other than the GPU's own functions: VFIO "
	  "can only hand them to a VM together." },
	{ "iommu.vfio", "a GPU or NIC owned by VFIO", GP_SRC_SYSFS, 0, check_vfio,
	  "Reads each GPU's and NIC's driver link and group type. Info when vfio-pci owns it (or its group is "
	  "\"unmanaged\"): it serves a VM, not this host." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_iommu, "iommu", "the IOMMU", checks);
