/* gpup2p doctor — numa.*: GPUs and NICs whose NUMA node the firmware did not give, and automatic
 * NUMA balancing. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static void check_unknown(struct gp_doctor_ctx *c)
{
	int nodes = gp_doctor_numa_nodes(c);
	struct gp_finding *f;

	if (nodes < 0) {
		gp_doctor_missing(c, "system", "/sys/devices/system/node", nodes);
		return;
	}
	if (gp_doctor_no_device(c))
		return;
	if (nodes <= 1) {
		f = gp_doctor_add(c, GP_SEV_OK, "system", "%s: device NUMA nodes do not matter",
				  nodes ? "one NUMA node" : "no NUMA nodes exposed");
		gp_finding_ev(f, "/sys/devices/system/node", "%d nodes", nodes);
		return;
	}
	for (int i = 0; i < c->topo->n; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);

		if (d->numa_node < 0) {
			f = gp_doctor_add(c, GP_SEV_WARNING, d->bdf, "%s has no NUMA node (numa_node -1) on a machine with %d "
					  "nodes: CPU and memory affinity cannot be chosen for it", c->topo->devs[i].name, nodes);
			gp_finding_fix(f, "update the firmware (ACPI _PXM / SRAT proximity); meanwhile bind by hand "
				       "(numactl --cpunodebind=N --membind=N) after checking the slot's socket");
		} else {
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s is on NUMA node %d", c->topo->devs[i].name, d->numa_node);
		}
		gp_finding_bdf(f, d->bdf);
		gp_finding_ev(f, "numa_node", "%d", d->numa_node);
	}
}

static void check_balancing(struct gp_doctor_ctx *c)
{
	int nodes = gp_doctor_numa_nodes(c);
	struct gp_finding *f;
	char v[32];
	long n;

	if (nodes >= 0 && nodes <= 1) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "kernel.numa_balancing", "one NUMA node: nothing to balance");
		return;
	}
	n = gp_doctor_read(c, "/proc/sys/kernel/numa_balancing", v, sizeof(v));
	if (n <= 0) {
		gp_doctor_missing(c, "kernel.numa_balancing", "/proc/sys/kernel/numa_balancing", n < 0 ? (int)n : -ENODATA);
		return;
	}
	if (!strcmp(v, "0")) {
		f = gp_doctor_add(c, GP_SEV_OK, "kernel.numa_balancing", "automatic NUMA balancing is off");
	} else {
		f = gp_doctor_add(c, GP_SEV_INFO, "kernel.numa_balancing", "automatic NUMA balancing is on (%s): it "
				  "migrates pages of processes placed by hand, adding jitter to host-side copies", v);
		gp_finding_fix(f, "sysctl -w kernel.numa_balancing=0 (and kernel.numa_balancing = 0 in /etc/sysctl.d/)");
	}
	gp_finding_ev(f, "/proc/sys/kernel/numa_balancing", "%s", v);
}

static const struct gp_doctor_check checks[] = {
	{ "numa.unknown", "GPUs or NICs with no NUMA node on a multi-node machine", GP_SRC_SYSFS, 0, check_unknown,
	  "Reads each GPU's and NIC's numa_node and /sys/devices/system/node. Warning for numa_node -1 on a machine "
	  "with several NUMA nodes: the firmware lacks proximity information, so nothing can place host buffers "
	  "or threads near the device." },
	{ "numa.balancing", "automatic NUMA balancing on", GP_SRC_PROC, 0, check_balancing,
	  "Reads /proc/sys/kernel/numa_balancing on machines with several NUMA nodes. Info when it is on: pages of "
	  "processes bound by hand are migrated, which shows up as jitter in host-side copies." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_numa, "numa", "NUMA placement", checks);
