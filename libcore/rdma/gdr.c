/* gpup2p — GPUDirect RDMA per GPU–NIC pair, by NCCL's rules (see gpup2p/gdr.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpup2p/gdr.h"
#include "gpup2p/rdma.h"

const enum gp_gdr_path gp_gdr_order[2] = { GP_GDR_DMABUF, GP_GDR_PEERMEM };

const char *gp_gdr_path_id(enum gp_gdr_path p)
{
	static const char *const id[] = { "none", "dmabuf", "peermem", "unknown" };

	return (unsigned)p < 4 ? id[p] : "unknown";
}

const char *gp_gdr_path_name(enum gp_gdr_path p)
{
	static const char *const name[] = { "none", "dma-buf", "nvidia-peermem", "unknown" };

	return (unsigned)p < 4 ? name[p] : "unknown";
}

int gp_gdr_peermem_loaded(const struct gp_root *r)
{
	/* NCCL's three, and the module's initstate (a build without MODULE_VERSION has no version file) */
	static const char *const p[] = { "/sys/kernel/mm/memory_peers/nv_mem/version",
		"/sys/kernel/mm/memory_peers/nv_mem_nc/version", "/sys/module/nvidia_peermem/version",
		"/sys/module/nvidia_peermem/initstate" };

	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		if (gp_root_exists(r, p[i]))
			return 1;
	return 0;
}

int gp_gdr_soft(const struct gp_root *r, const char *dev)
{
	char path[160];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", dev);
	return !gp_root_exists(r, path);
}

/* Append "; why" (or why) to buf. */
static void add(char *buf, size_t n, const char *why)
{
	size_t used = strlen(buf);

	if (used < n)
		snprintf(buf + used, n - used, "%s%s", used ? "; " : "", why);
}

/* NCCL_NET_GDR_READ's default (-2): GPUDirect reads (the send side) only from compute capability 8.0
 * on, or with an NVLink to another GPU, or as the only GPU. -1 unknown, 1 an NVLink peer (or alone). */
static int nvlinked(const struct gp_topo *t, int g)
{
	int unknown = 0;

	if (t->ngpu == 1)
		return 1;
	for (int h = 0; h < t->ngpu; h++) {
		if (h == g)
			continue;
		if (gp_topo_link_at(t, g, h).nvlinks > 0)
			return 1;
		unknown |= gp_topo_link_at(t, g, h).nvlinks < 0;
	}
	return unknown ? -1 : 0;
}

/* A GPU NVLinked to g within PXB of NIC n, or -1: NCCL's PXN sends through it. */
static int pxn_gpu(const struct gp_topo *t, int g, int n)
{
	for (int h = 0; h < t->ngpu; h++)
		if (h != g && gp_topo_link_at(t, g, h).nvlinks > 0 && gp_topo_link_at(t, h, n).pcie <= GP_TC_PXB)
			return h;
	return -1;
}

/* The path the NIC would use, from the machine's facts: NCCL's order (dma-buf, then the module). */
static enum gp_gdr_path path_of(const struct gp_gdr_sys *s, int *both)
{
	*both = 0;
	if (s->dmabuf == 1)
		return *both = s->peermem == 1, GP_GDR_DMABUF;
	if (s->peermem == 1)
		return GP_GDR_PEERMEM;
	if (s->dmabuf == 0 && s->peermem == 0)
		return GP_GDR_NONE;
	return GP_GDR_UNKNOWN;
}

int gp_gdr_pair(const struct gp_topo *t, int gpu, const char *dev, const struct gp_gdr_sys *s,
		struct gp_gdr_verdict *v)
{
	int n = dev ? gp_rdma_nic_index(t, dev) : -1, cc, gdr, nvl;
	char t2[384];
	const char *dist, *why = s->dmabuf_why && s->dmabuf_why[0] ? s->dmabuf_why : "not said";

	memset(v, 0, sizeof(*v));
	v->pxn = -1;
	if (gpu < 0 || gpu >= t->ngpu || n < 0)
		return -ENOENT;
	v->dist = (enum gp_topo_class)gp_topo_link_at(t, gpu, n).pcie;
	dist = gp_topo_class_name(v->dist);
	v->path = path_of(s, &v->both);
	gdr = s->gpu_gdr ? s->gpu_gdr[gpu] : -1;
	cc = s->gpu_cc ? s->gpu_cc[gpu] : 0;
	if (s->soft ? s->soft(s->soft_arg, dev) : gp_gdr_soft(t->pci->root, dev)) {
		v->why |= GP_GDR_SOFT;
		v->path = GP_GDR_NONE;
		snprintf(t2, sizeof(t2), "%s is software RDMA: it copies through the CPU and never reaches GPU memory", dev);
		add(v->reason, sizeof(v->reason), t2);
	} else if (v->path == GP_GDR_NONE) {
		v->why |= GP_GDR_NOPATH;
		snprintf(t2, sizeof(t2), "neither nvidia-peermem (nor nv_peer_mem) is loaded nor dma-buf usable "
			 "(dma-buf: %.300s)", why);
		add(v->reason, sizeof(v->reason), t2);
	}
	if (gdr == 0) {
		v->why |= GP_GDR_NOGPU;
		add(v->reason, sizeof(v->reason), "CUDA says the GPU does not support GPUDirect RDMA "
		    "(GPU_DIRECT_RDMA_SUPPORTED = 0)");
	}
	if (v->dist > GP_TC_PXB) {
		v->why |= GP_GDR_FAR;
		snprintf(t2, sizeof(t2), "%s is beyond NCCL's default NCCL_NET_GDR_LEVEL=PXB (NCCL_NET_GDR_LEVEL=%s "
			 "would force it)", dist, dist);
		add(v->reason, sizeof(v->reason), t2);
		v->pxn = pxn_gpu(t, gpu, n);
	}
	if (v->why)
		v->possible = 0;
	else if (v->path == GP_GDR_UNKNOWN) {
		v->possible = -1;
		snprintf(t2, sizeof(t2), "%s; dma-buf unknown: %.300s", s->peermem < 0 ? "peer-memory module unknown" :
			 "no peer-memory module", why);
		add(v->reason, sizeof(v->reason), t2);
	}
	else {
		v->possible = 1;
	}
	nvl = nvlinked(t, gpu);
	if (v->possible == 1 && cc > 0 && cc < 80 && nvl == 0)
		snprintf(v->read_note, sizeof(v->read_note), "NCCL sends from this GPU through host memory: GPUDirect "
			 "reads are off by default below compute capability 8.0 (%d.%d) without an NVLink to another GPU "
			 "(NCCL_NET_GDR_READ=1 turns them on)", cc / 10, cc % 10);
	return 0;
}
