/* gpup2p doctor — topo.*: where the GPUs sit against the NICs and each other, from the topology
 * matrix (`nvidia-smi topo -m` codes) the topo module built. */
#include <stdio.h>
#include <string.h>

#include "check.h"

/* The closest NIC to GPU g: its matrix index (or -1) and the PCIe class of the pair. */
static int closest_nic(const struct gp_doctor_ctx *c, int g, enum gp_topo_class *cls)
{
	int best = -1;

	*cls = GP_TC_SYS;
	for (int j = c->topo->ngpu; j < c->topo->n; j++) {
		enum gp_topo_class k = gp_topo_link_at(c->topo, g, j).pcie;

		if (best < 0 || k < *cls) {
			best = j;
			*cls = k;
		}
	}
	return best;
}

static void check_nic_distance(struct gp_doctor_ctx *c)
{
	int far = 0;
	enum gp_topo_class cls;

	if (gp_doctor_no_gpu(c))
		return;
	if (!c->topo->nnic) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no NIC: nothing for GPUDirect RDMA");
		return;
	}
	for (int g = 0; g < c->topo->ngpu; g++) {
		closest_nic(c, g, &cls);
		far += cls > GP_TC_PXB;
	}
	for (int g = 0; g < c->topo->ngpu; g++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, g);
		const char *name = c->topo->devs[g].name;
		int j = closest_nic(c, g, &cls);
		const char *nic = c->topo->devs[j].name, *label = c->topo->devs[j].label;
		struct gp_finding *f;

		if (cls <= GP_TC_PXB) {
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s: %s (%s) is %s", name, nic, label, gp_topo_class_name(cls));
		} else if (far < c->topo->ngpu) {
			/* some GPUs have a NIC on their switch and this one has not: a GPUDirect design with a gap */
			f = gp_doctor_add(c, GP_SEV_WARNING, d->bdf, "%s: its closest NIC, %s (%s), is %s while other GPUs "
					  "have one within PXB: NCCL's default GPUDirect RDMA level (PXB) leaves this GPU's "
					  "network traffic bouncing through host memory", name, nic, label,
					  gp_topo_class_name(cls));
			gp_finding_fix(f, "move a NIC under this GPU's PCIe switch, or accept it (NCCL_NET_GDR_LEVEL=%s lets "
				       "NCCL use GPUDirect RDMA across it, slower)", gp_topo_class_name(cls));
		} else {
			/* no GPU has a NIC nearby: these NICs are not laid out for GPUDirect RDMA */
			f = gp_doctor_add(c, GP_SEV_INFO, d->bdf, "%s: its closest NIC, %s (%s), is %s, as for every GPU here: "
					  "GPUDirect RDMA goes through the host bridge or is not used (NCCL's default stops "
					  "at PXB)", name, nic, label, gp_topo_class_name(cls));
			gp_finding_fix(f, "fine for a front-end network; for GPUDirect RDMA put a NIC under each GPU's "
				       "PCIe switch, or set NCCL_NET_GDR_LEVEL=%s", gp_topo_class_name(cls));
		}
		gp_finding_bdf(f, d->bdf);
		gp_finding_bdf(f, gp_doctor_dev(c, j)->bdf);
		gp_finding_ev(f, "closest NIC", "%s %s %s", nic, gp_doctor_dev(c, j)->bdf, gp_topo_class_name(cls));
	}
}

static void check_sys_pairs(struct gp_doctor_ctx *c)
{
	char pairs[512] = "", unknown[512] = "", item[32];
	int n = 0, nu = 0, total = 0;
	struct gp_finding *f;

	if (c->topo->ngpu < 2) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "%s", c->topo->ngpu ? "one GPU: no pair" : "no NVIDIA GPU");
		return;
	}
	for (int a = 0; a < c->topo->ngpu; a++) {
		for (int b = a + 1; b < c->topo->ngpu; b++) {
			const struct gp_topo_link lv = gp_topo_link_at(c->topo, a, b), *l = &lv;
			size_t used;

			total++;
			if (l->pcie != GP_TC_SYS || l->nvlinks > 0)
				continue;
			snprintf(item, sizeof(item), "%s-%s", c->topo->devs[a].name, c->topo->devs[b].name);
			used = strlen(l->nvlinks < 0 ? unknown : pairs);
			if (used < sizeof(pairs))
				snprintf((l->nvlinks < 0 ? unknown : pairs) + used, sizeof(pairs) - used, "%s%s", used ? " " : "",
					 item);
			*(l->nvlinks < 0 ? &nu : &n) += 1;
		}
	}
	if (n) {
		f = gp_doctor_add(c, GP_SEV_INFO, "system", "%d of %d GPU pairs are joined only through the CPUs' "
				  "interconnect (SYS) and no NVLink: %s. P2P across it is often unsupported or slow; CUDA "
				  "stages those copies through host memory", n, total, pairs);
		gp_finding_fix(f, "place GPUs that exchange data on one socket (CUDA_VISIBLE_DEVICES), or add NVLink "
			       "bridges");
		gp_finding_ev(f, "SYS pairs", "%s", pairs);
	} else if (nu) {
		f = gp_doctor_nvml_recorded(c) ? gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "%d GPU pairs cross SYS; NVLink "
							       "unknown (%s): %s",
						  nu, c->facts->why, unknown)
				  : gp_doctor_add(c, GP_SEV_SKIPPED, "system", "%d GPU pairs cross SYS; NVLink not recorded under "
						  "the root: %s", nu, unknown);
		gp_finding_ev(f, "SYS pairs", "%s", unknown);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "system", "no GPU pair is joined only through SYS (%d pairs)", total);
	}
	for (int g = 0; g < c->topo->ngpu && (n || nu); g++)
		for (int h = 0; h < c->topo->ngpu; h++)
			if (g != h && gp_topo_link_at(c->topo, g, h).pcie == GP_TC_SYS &&
			    gp_topo_link_at(c->topo, g, h).nvlinks <= 0) {
				gp_finding_bdf(f, gp_doctor_dev(c, g)->bdf);
				break;
			}
}

static const struct gp_doctor_check checks[] = {
	{ "topo.nic_distance", "a GPU with no NIC within PXB while other GPUs have one", GP_SRC_SYSFS, 0,
	  check_nic_distance,
	  "Finds each GPU's closest NIC in the topology matrix. Warning for a GPU whose closest NIC is beyond PXB "
	  "(through the host bridge or farther) while other GPUs have a NIC within PXB: NCCL's default GPUDirect "
	  "RDMA level stops at PXB, so that GPU's network traffic goes through host memory. Info when no GPU has "
	  "a NIC nearby (a front-end network, not laid out for GPUDirect RDMA)." },
	{ "topo.sys_pairs", "GPU pairs only through the SMP interconnect, with no NVLink", GP_SRC_SYSFS | GP_SRC_NVML, 0,
	  check_sys_pairs,
	  "Lists GPU pairs whose PCIe path crosses the CPUs' interconnect (SYS: different NUMA nodes) and that no "
	  "NVLink joins (NVML). Info: P2P across sockets is often unsupported or slow, and CUDA stages those "
	  "copies through host memory." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_topo, "topo", "GPU and NIC placement", checks);
