/* gpup2p doctor — peermem.*: the module that lets RDMA NICs register GPU memory (nvidia-peermem,
 * or the old nv_peer_mem), or the dma-buf path of the open kernel module. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/cuda.h"
#include "gpup2p/verbs.h"
#include "check.h"

/* Both modules' states; 0 when read, else the error already reported. */
static int mods(struct gp_doctor_ctx *c, int *nvpm, int *legacy)
{
	*nvpm = gp_doctor_module(c, "nvidia_peermem");
	*legacy = gp_doctor_module(c, "nv_peer_mem");
	if (*nvpm >= 0 && *legacy >= 0)
		return 0;
	gp_doctor_missing(c, "nvidia_peermem", "/proc/modules", *nvpm < 0 ? *nvpm : *legacy);
	return -1;
}

static void check_conflict(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	int nvpm, legacy;

	if (mods(c, &nvpm, &legacy))
		return;
	if (nvpm && legacy) {
		f = gp_doctor_add(c, GP_SEV_ERROR, "nvidia_peermem", "nv_peer_mem and nvidia_peermem are both loaded: both "
				  "register as peer-memory clients of the RDMA stack");
		gp_finding_fix(f, "rmmod nv_peer_mem and remove it (it is the old Mellanox module; nvidia-peermem replaces it)");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "nvidia_peermem", "at most one peer-memory module is loaded");
	}
	gp_finding_ev(f, "/proc/modules", "nvidia_peermem %s, nv_peer_mem %s", nvpm ? "loaded" : "absent",
		      legacy ? "loaded" : "absent");
}

static void check_legacy(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	const char *rel;
	int nvpm, legacy;

	if (mods(c, &nvpm, &legacy))
		return;
	rel = gp_doctor_nv_release(c);
	if (legacy && !nvpm && (!rel[0] || atoi(rel) >= 470)) {
		f = gp_doctor_add(c, GP_SEV_WARNING, "nv_peer_mem", "the old nv_peer_mem is loaded although the driver%s%s "
				  "ships nvidia-peermem (since R470)", rel[0] ? " " : "", rel);
		gp_finding_fix(f, "rmmod nv_peer_mem; modprobe nvidia-peermem (gpup2p enable --peermem); remove the "
			       "nv_peer_mem package");
	} else if (legacy && !nvpm) {
		f = gp_doctor_add(c, GP_SEV_OK, "nv_peer_mem", "nv_peer_mem with driver %s (before R470 there is no "
				  "nvidia-peermem)", rel);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "nv_peer_mem", "nv_peer_mem is not used alone");
	}
	gp_finding_ev(f, "/proc/modules", "nv_peer_mem %s", legacy ? "loaded" : "absent");
	if (rel[0])
		gp_finding_ev(f, "driver", "%s", rel);
}

static void check_missing(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	int nvpm, legacy, rdma = gp_doctor_rdma_nics(c), err, open;

	if (!c->topo->ngpu || !rdma) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "nvidia_peermem", "%s", c->topo->ngpu ? "no RDMA NIC" : "no NVIDIA GPU");
		return;
	}
	if (gp_doctor_module(c, "nvidia") == 0) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "nvidia_peermem", "the nvidia module is not loaded (see driver.loaded)");
		return;
	}
	if (mods(c, &nvpm, &legacy))
		return;
	open = gp_doctor_nv_open(gp_doctor_nv_version(c, &err));
	if (nvpm || legacy) {
		f = gp_doctor_add(c, GP_SEV_OK, "nvidia_peermem", "%s is loaded: NICs can register GPU memory",
				  nvpm ? "nvidia_peermem" : "nv_peer_mem");
	} else if (open == 1) {
		f = gp_doctor_add(c, GP_SEV_INFO, "nvidia_peermem", "no peer-memory module: GPUDirect RDMA only through "
				  "dma-buf (open module; needs kernel >= 5.12 and rdma-core with ibv_reg_dmabuf_mr; not probed)");
		gp_finding_fix(f, "if your stack needs it (older NCCL, MPI, GDS): modprobe nvidia-peermem (gpup2p enable "
			       "--peermem)");
	} else {
		f = gp_doctor_add(c, GP_SEV_WARNING, "nvidia_peermem", "%d RDMA NIC%s but no peer-memory module and no "
				  "dma-buf path (%s): GPUDirect RDMA is unavailable, transfers bounce through host memory",
				  rdma, rdma > 1 ? "s" : "", open == 0 ? "proprietary kernel module" : "driver flavour unknown");
		gp_finding_fix(f, "modprobe nvidia-peermem (gpup2p enable --peermem), and load it at boot (modules-load.d)");
	}
	gp_finding_ev(f, "/proc/modules", "nvidia_peermem %s, nv_peer_mem %s", nvpm ? "loaded" : "absent",
		      legacy ? "loaded" : "absent");
}

/* Append "why" to the reasons list. */
static void reason(char *buf, size_t n, const char *why)
{
	size_t used = strlen(buf);

	if (used < n)
		snprintf(buf + used, n - used, "%s%s", used ? "; " : "", why);
}

/* What the live probes say about dma-buf (CUDA's attribute, ibv_reg_dmabuf_mr) into why/have. */
static void dmabuf_live(struct gp_doctor_ctx *c, char *why, size_t wn, char *have, size_t hn)
{
	const struct gp_cuda_probe *cu = gp_doctor_cuda(c);
	const struct gp_verbs_probe *v = gp_doctor_verbs(c);
	char t[96];

	if (!cu || !cu->loaded || cu->init != 0)
		reason(why, wn, "CUDA not usable (see driver.cuda_init)");
	else if (cu->dmabuf == 0) {
		snprintf(t, sizeof(t), "CUDA device %d says CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0", cu->dmabuf_dev);
		reason(why, wn, t);
	} else if (cu->dmabuf < 0)
		reason(why, wn, "CUDA's DMA_BUF_SUPPORTED attribute could not be read");
	else
		reason(have, hn, "CUDA: DMA_BUF_SUPPORTED");
	if (!v || !v->loaded)
		reason(why, wn, "libibverbs not loadable (see rdma.verbs_lib)");
	else if (!v->dmabuf_mr)
		reason(why, wn, "libibverbs lacks ibv_reg_dmabuf_mr (rdma-core before v34)");
	else
		reason(have, hn, "libibverbs: ibv_reg_dmabuf_mr");
}

static void check_dmabuf(struct gp_doctor_ctx *c)
{
	char why[512] = "", have[256] = "", osrel[128], t[96];
	const char *ver, *rel;
	struct gp_finding *f = NULL;
	int err, open, major = 0, minor = 0;
	long n;

	if (!c->topo->ngpu || !gp_doctor_rdma_nics(c)) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "dma-buf", "%s", c->topo->ngpu ? "no RDMA NIC" : "no NVIDIA GPU");
		return;
	}
	if (!(ver = gp_doctor_nv_version(c, &err))) {
		if (gp_doctor_module(c, "nvidia") == 0)
			gp_doctor_add(c, GP_SEV_SKIPPED, "dma-buf", "the nvidia module is not loaded (see driver.loaded)");
		else
			gp_doctor_missing(c, "dma-buf", "/proc/driver/nvidia/version", err);
		return;
	}
	if ((n = gp_doctor_read(c, "/proc/sys/kernel/osrelease", osrel, sizeof(osrel))) < 0) {
		gp_doctor_missing(c, "dma-buf", "/proc/sys/kernel/osrelease", (int)n);
		return;
	}
	open = gp_doctor_nv_open(ver);
	rel = gp_doctor_nv_release(c);
	if (open == 1 && rel[0] && atoi(rel) < 515)
		reason(why, sizeof(why), "open kernel module before R515 (no dma-buf export)");
	else if (open == 1)
		reason(have, sizeof(have), "open kernel module");
	else
		reason(why, sizeof(why), open ? "driver flavour unknown" : "proprietary kernel module (dma-buf export "
		       "needs the open one)");
	if (sscanf(osrel, "%d.%d", &major, &minor) != 2)
		snprintf(t, sizeof(t), "kernel release \"%.40s\" not understood", osrel);
	else if (major < 5 || (major == 5 && minor < 12))
		snprintf(t, sizeof(t), "kernel %d.%d (RDMA dma-buf registration since 5.12)", major, minor);
	else
		snprintf(t, sizeof(t), "kernel %d.%d", major, minor);
	if (major > 5 || (major == 5 && minor >= 12))
		reason(have, sizeof(have), t);
	else
		reason(why, sizeof(why), t);
	if (c->probe_libs)
		dmabuf_live(c, why, sizeof(why), have, sizeof(have));
	if (why[0]) {
		f = gp_doctor_add(c, GP_SEV_INFO, "dma-buf", "the dma-buf GPUDirect RDMA path is not available: %s%s",
				  why, gp_doctor_module(c, "nvidia_peermem") == 1 ? " (nvidia_peermem serves GPUDirect RDMA)" : "");
		gp_finding_fix(f, "for dma-buf: the open kernel module (R515+), kernel 5.12+, rdma-core 34+; or keep "
			       "using nvidia-peermem");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "dma-buf", "the dma-buf GPUDirect RDMA path is available: %s%s", have,
				  c->probe_libs ? "" : " (CUDA and libibverbs not probed offline)");
	}
	gp_finding_ev(f, "/proc/driver/nvidia/version", "%s", open == 1 ? "open" : open ? "unknown" : "proprietary");
	gp_finding_ev(f, "/proc/sys/kernel/osrelease", "%s", osrel);
}

static const struct gp_doctor_check checks[] = {
	{ "peermem.missing", "RDMA NICs and GPUs but no way for the NICs to reach GPU memory", GP_SRC_PROC | GP_SRC_SYSFS,
	  0, check_missing,
	  "Reads /proc/modules and the driver flavour. Warning when GPUs and RDMA NICs are present and neither "
	  "nvidia_peermem (nor nv_peer_mem) is loaded nor the open module's dma-buf path exists; info when only "
	  "dma-buf remains (not probed: that needs CUDA)." },
	{ "peermem.conflict", "nv_peer_mem and nvidia_peermem both loaded", GP_SRC_PROC, 0, check_conflict,
	  "Reads /proc/modules. Error when the old Mellanox nv_peer_mem and the driver's nvidia_peermem are both "
	  "loaded. Fix: unload and remove nv_peer_mem." },
	{ "peermem.legacy", "nv_peer_mem alone with a driver that ships nvidia-peermem", GP_SRC_PROC, 0, check_legacy,
	  "Reads /proc/modules and the driver version. Warning when nv_peer_mem is loaded without nvidia_peermem on a "
	  "driver of R470 or later (or of unknown version), which ships nvidia-peermem." },
	{ "peermem.dmabuf", "whether the dma-buf GPUDirect RDMA path is available", GP_SRC_PROC | GP_SRC_SYSFS,
	  0, check_dmabuf,
	  "Reads /proc/driver/nvidia/version (open kernel module) and /proc/sys/kernel/osrelease (5.12 or later); "
	  "live also CUDA's CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED and ibv_reg_dmabuf_mr in libibverbs. Info when "
	  "a part is missing, ok when all are there (offline: the static parts). Skipped without RDMA NICs." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_peermem, "peermem", "GPUDirect RDMA peer memory", checks);
