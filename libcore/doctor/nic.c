/* gpup2p doctor — nic.*: network and InfiniBand functions of RDMA-capable NICs that no driver claimed
 * (no netdev, no RDMA device: the NIC is invisible to NCCL and MPI). */
#include <stdio.h>
#include <string.h>

#include "check.h"

/* An RDMA-capable NIC function: a network (02xx) or InfiniBand (0c06) class from a vendor whose NICs
 * do RDMA, narrowed to the RDMA families where the vendor also makes plain NICs. */
static const char *rdma_vendor(const struct gp_pci_dev *d)
{
	unsigned cls = d->class_code >> 8, id = d->device;

	if ((cls >> 8) != 0x02 && cls != 0x0c06)
		return NULL;
	switch (d->vendor) {
	case 0x15b3:
		return "NVIDIA/Mellanox ConnectX (mlx5_core, mlx4_core)";
	case 0x14e4: /* NetXtreme-E/C (bnxt_en + bnxt_re); the NetXtreme tg3 parts below 0x16c0 do no RDMA */
		return (id >= 0x16c0 && id < 0x1900) || (id >= 0xd800 && id < 0xd900) ? "Broadcom NetXtreme-E (bnxt_en)" : NULL;
	case 0x8086: /* E810 (ice + irdma) and X722 (i40e + irdma) */
		return (id >= 0x1591 && id <= 0x159b) || (id >= 0x37d0 && id <= 0x37d3) ? "Intel E810/X722 (ice, i40e)"
											  : NULL;
	case 0x1425:
		return "Chelsio T5/T6 (cxgb4)";
	case 0x1077:
		return "Marvell/QLogic FastLinQ (qede)";
	case 0x1d0f:
		return id >= 0xefa0 && id <= 0xefaf ? "AWS EFA (efa)" : NULL;
	case 0x19e5:
		return "Huawei HNS (hns3)";
	default:
		return NULL;
	}
}

static void check_driver(struct gp_doctor_ctx *c)
{
	int n = 0;

	for (int i = 0; i < c->pci->n; i++) {
		const struct gp_pci_dev *d = &c->pci->devs[i];
		const char *what = rdma_vendor(d);
		char path[96];
		struct gp_finding *f;

		if (!what)
			continue;
		n++;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/physfn", d->bdf);
		if (d->driver[0]) {
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "bound to %s", d->driver);
		} else if (gp_root_exists(c->root, path)) {
			/* virtual functions are often left unbound on purpose, for VMs (vfio-pci binds them later) */
			f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "a virtual function with no driver (kept for a VM?)");
		} else {
			f = gp_doctor_add(c, GP_SEV_WARNING, d->bdf, "%s (class %04x) has no driver: no network interface, "
					  "no RDMA device, invisible to NCCL and MPI", what, d->class_code >> 8);
			gp_finding_fix(f, "load the NIC's driver (modprobe mlx5_core, bnxt_en, ice, ...) or see dmesg for why "
				       "it did not bind (firmware, secure boot, a blacklist)");
		}
		gp_finding_bdf(f, d->bdf);
		gp_finding_ev(f, "driver", "%s", d->driver[0] ? d->driver : "none");
		gp_finding_ev(f, "vendor:device", "%04x:%04x", d->vendor, d->device);
	}
	if (!n)
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no network or InfiniBand function of an RDMA NIC vendor");
}

static const struct gp_doctor_check checks[] = {
	{ "nic.driver", "an RDMA-capable NIC function with no driver bound", GP_SRC_SYSFS, 0, check_driver,
	  "Looks at each network (02xx) or InfiniBand (0c06) PCI function of an RDMA NIC family (NVIDIA/Mellanox, "
	  "Broadcom NetXtreme-E, Intel E810/X722, Chelsio, Marvell FastLinQ, AWS EFA, Huawei). Warning when no "
	  "driver is bound: the NIC has no interface and no RDMA device. Virtual functions without a driver are "
	  "skipped (often kept for VMs)." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_nic, "nic", "NIC functions", checks);
