/* gpup2p doctor — rdma.gdr: whether GPUDirect RDMA is possible for each GPU–NIC pair, by NCCL's rules
 * (libcore/rdma/gdr.c), from the module state and dma-buf parts peermem.* reads and, live, CUDA's
 * per-GPU attributes. Faults other checks already warn about (peermem.missing, topo.nic_distance)
 * are named here, not counted twice: a pair alarms (info) only when it is its GPU's closest NIC and the
 * GPU has no GPUDirect RDMA NIC at all (a pair NCCL's PXN covers is "ok"); a GPU without GPUDirect RDMA
 * warns, and an unknown counts, once, on its closest NIC; the rest of a GPU's pairs are "ok". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/cuda.h"
#include "gpup2p/gdr.h"
#include "gpup2p/rdma.h"
#include "check.h"
#include "rdma.h"

/* CUDA's word on each topology GPU (live, or tests' doubles): GPU_DIRECT_RDMA_SUPPORTED and compute
 * capability; -1 and 0 (unknown) otherwise, but 0 for a GeForce part by its NVML (recorded) name. */
static void cuda_facts(struct gp_doctor_ctx *c, int *gdr, int *cc)
{
	const struct gp_cuda_probe *cu = c->probe_libs ? gp_doctor_cuda(c) : NULL;

	for (int g = 0; g < c->topo->ngpu; g++) {
		const struct gp_cuda_probe_gpu *p = cu && cu->loaded && !cu->init ?
						    gp_cuda_probe_find(cu, gp_doctor_dev(c, g)->bdf) : NULL;

		gdr[g] = p ? p->gdr : -1;
		cc[g] = p ? p->cc : 0;
		/* no CUDA (offline): the name NVML recorded; GeForce parts have no GPUDirect RDMA */
		if (gdr[g] < 0 && gp_doctor_geforce(c, g))
			gdr[g] = 0;
	}
}

/* Offline, a GPU judged by its NVML name: say so where the reason would quote CUDA. */
static void named_reason(char *reason, size_t n)
{
	static const char cuda[] = "CUDA says the GPU does not support GPUDirect RDMA (GPU_DIRECT_RDMA_SUPPORTED = 0)";
	static const char name[] = "a GeForce part by the name NVML recorded: no GPUDirect RDMA";
	char *p = strstr(reason, cuda);

	if (p && strlen(reason) - sizeof(cuda) + sizeof(name) < n) {
		memmove(p + sizeof(name) - 1, p + sizeof(cuda) - 1, strlen(p + sizeof(cuda) - 1) + 1);
		memcpy(p, name, sizeof(name) - 1);
	}
}

/* The severity of a pair that is not possible, and the check that carries the alarm ("" none). */
static enum gp_sev not_possible(const struct gp_gdr_verdict *v, int gpu_has_gdr, int closest, const char **carried)
{
	*carried = "";
	if ((v->why & GP_GDR_NOGPU) && !(v->why & GP_GDR_SOFT) && v->dist <= GP_TC_PXB)
		return closest ? GP_SEV_WARNING : GP_SEV_OK;   /* one alarm per GPU: on its closest NIC */
	if (v->why == GP_GDR_FAR && v->pxn >= 0)
		return GP_SEV_OK;      /* NCCL's PXN sends through a GPU near the NIC, with GPUDirect RDMA */
	if (gpu_has_gdr || !closest)
		return GP_SEV_OK;      /* not this GPU's GPUDirect NIC: normal on a multi-NIC server */
	if (v->why & GP_GDR_NOPATH)
		*carried = " (peermem.missing carries the warning)";
	else if (v->why & GP_GDR_FAR)
		*carried = " (see topo.nic_distance)";
	return GP_SEV_INFO;
}

static void one_pair(struct gp_doctor_ctx *c, int g, int j, const struct gp_gdr_verdict *v, int gpu_has_gdr,
		     int closest, const struct gp_doctor_dmabuf *d, const int *gdr, const int *cc)
{
	const char *nic = gp_doctor_dev(c, j)->rdma, *dist = gp_topo_class_name(v->dist), *carried = "";
	char subj[96], pxn[160] = "";
	struct gp_finding *f;
	enum gp_sev sev;

	snprintf(subj, sizeof(subj), "%s-%s", gp_doctor_dev(c, g)->bdf, nic);
	if (v->pxn >= 0)
		snprintf(pxn, sizeof(pxn), "; NCCL's PXN can relay through %s over NVLink (%s to %s)",
			 c->topo->devs[v->pxn].name, gp_topo_class_name((enum gp_topo_class)gp_topo_link_at(c->topo, v->pxn,
			 j).pcie), nic);
	if (v->possible == 1) {
		f = gp_doctor_add(c, v->read_note[0] ? GP_SEV_INFO : GP_SEV_OK, subj, "GPUDirect RDMA possible via %s (%s)%s%s%s",
				  gp_gdr_path_name(v->path), dist, v->both ? "; nvidia-peermem is loaded too: NCCL registers "
				  "through dma-buf first and falls back to it" : "", v->read_note[0] ? "; " : "", v->read_note);
	} else if (v->possible < 0) {
		int offline = !c->probe_libs && d->nunk == 1;

		/* unknown once per GPU, on its closest NIC; its other pairs say so without counting again */
		sev = offline || !closest ? GP_SEV_SKIPPED : GP_SEV_UNKNOWN;
		f = gp_doctor_add(c, sev, subj, "%s (%s): %s%s", offline ? "GPUDirect RDMA possible only through dma-buf, "
				  "whose CUDA and libibverbs parts are probed live only" : "whether GPUDirect RDMA is possible is "
				  "unknown", dist, v->reason, offline || closest ? "" : " (counted once, on this GPU's closest NIC)");
	} else {
		sev = not_possible(v, gpu_has_gdr, closest, &carried);
		f = gp_doctor_add(c, sev, subj, "GPUDirect RDMA not possible: %s%s%s", v->reason, pxn, carried);
		if (sev == GP_SEV_WARNING)
			gp_finding_fix(f, "GeForce parts and some vGPU profiles have no GPUDirect RDMA: use a data-center GPU "
				       "(or a profile with it) for %s", nic);
		else if (sev == GP_SEV_INFO && (v->why & GP_GDR_SOFT))
			gp_finding_fix(f, "for GPUDirect RDMA use a hardware RDMA NIC; software RDMA (rxe, siw) is for "
				       "testing the verbs stack");
		else if (sev == GP_SEV_INFO && (v->why & GP_GDR_NOGPU))
			gp_finding_fix(f, "this GPU has no GPUDirect RDMA (GeForce parts, some vGPU profiles): use a data-center "
				       "GPU for %s", nic);
		else if (sev == GP_SEV_INFO && (v->why & GP_GDR_NOPATH))
			gp_finding_fix(f, "modprobe nvidia-peermem (see peermem.missing), or the dma-buf parts (see "
				       "peermem.dmabuf)");
		else if (sev == GP_SEV_INFO)
			gp_finding_fix(f, "put a NIC under this GPU's PCIe switch, or set NCCL_NET_GDR_LEVEL=%s", dist);
	}
	gp_finding_bdf(f, gp_doctor_dev(c, g)->bdf);
	gp_finding_bdf(f, gp_doctor_dev(c, j)->bdf);
	gp_finding_ev(f, "gpu", "%s %s", c->topo->devs[g].name, gp_doctor_dev(c, g)->bdf);
	gp_finding_ev(f, "nic", "%s %s", nic, gp_doctor_dev(c, j)->bdf);
	if (gdr[g] == 0 && !c->probe_libs && gp_doctor_geforce(c, g))
		gp_finding_ev(f, "NVML name", "%s: GeForce, no GPUDirect RDMA", c->topo->devs[g].name);
	gp_finding_ev(f, "distance", "%s", dist);
	gp_finding_ev(f, "path", "%s", gp_gdr_path_id(v->possible == 1 ? v->path : v->possible < 0 ? GP_GDR_UNKNOWN :
						    GP_GDR_NONE));
	gp_finding_ev(f, "reason", "%s", v->possible != 1 ? v->reason : v->read_note[0] ? v->read_note : "none");
	gp_finding_ev(f, "dma-buf", "%s: %s", d->usable == 1 ? "usable" : d->usable ? "unknown" : "missing",
		      d->usable == 1 ? d->have : d->usable ? d->unk : d->why);
	if (gdr[g] >= 0)
		gp_finding_ev(f, "CUDA GPU_DIRECT_RDMA_SUPPORTED", "%d", gdr[g]);
	if (cc[g] > 0)
		gp_finding_ev(f, "CUDA compute capability", "%d.%d", cc[g] / 10, cc[g] % 10);
}

/* 1 when topology entry j is a NIC with an RDMA device of its own name (the first NIC listing it). */
static int pair_of(const struct gp_doctor_ctx *c, int j)
{
	return gp_doctor_dev(c, j)->rdma[0] && gp_rdma_nic_index(c->topo, gp_doctor_dev(c, j)->rdma) == j;
}

/* gp_gdr_sys's soft: from the RDMA devices doctor read once (doctor/rdma_facts.c). */
static int soft_of(void *c, const char *dev)
{
	return gp_doctor_ib_soft(c, dev);
}

void gp_doctor_check_gdr(struct gp_doctor_ctx *c)
{
	struct gp_doctor_dmabuf d;
	struct gp_gdr_verdict *v;
	struct gp_gdr_sys s = { 0 };
	int nvpm, legacy, *gdr, *cc, n = c->topo->n, ng = c->topo->ngpu;

	if (gp_doctor_no_gpu(c))
		return;
	if (!gp_doctor_rdma_nics(c)) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no RDMA NIC");
		return;
	}
	if (gp_doctor_module(c, "nvidia") == 0) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "the nvidia module is not loaded (see driver.loaded)");
		return;
	}
	if (gp_doctor_peermem_mods(c, &nvpm, &legacy) || gp_doctor_dmabuf_state(c, "dma-buf", &d))
		return;
	v = calloc((size_t)ng * (size_t)n, sizeof(*v));
	gdr = calloc((size_t)ng, sizeof(*gdr));
	cc = calloc((size_t)ng, sizeof(*cc));
	if (!v || !gdr || !cc) {
		gp_doctor_add(c, GP_SEV_UNKNOWN, "system", "out of memory");
		goto out;
	}
	cuda_facts(c, gdr, cc);
	s.peermem = nvpm || legacy;
	s.dmabuf = d.usable;
	s.dmabuf_why = d.usable == 0 ? d.why : d.unk;
	s.gpu_gdr = gdr;
	s.gpu_cc = cc;
	s.soft = soft_of;
	s.soft_arg = c;
	for (int g = 0; g < ng; g++) {
		int has = 0, best = -1;     /* the GPU's closest RDMA NIC: the first in NIC order on a tie */

		for (int j = ng; j < n; j++) {
			if (!pair_of(c, j) || gp_gdr_pair(c->topo, g, gp_doctor_dev(c, j)->rdma, &s, &v[g * n + j]))
				continue;
			if (!c->probe_libs && gdr[g] == 0)
				named_reason(v[g * n + j].reason, sizeof(v[g * n + j].reason));
			has |= v[g * n + j].possible == 1;
			if (best < 0 || v[g * n + j].dist < v[g * n + best].dist)
				best = j;
		}
		for (int j = ng; j < n; j++)
			if (pair_of(c, j))
				one_pair(c, g, j, &v[g * n + j], has, j == best, &d, gdr, cc);
	}
out:
	free(v);
	free(gdr);
	free(cc);
}
