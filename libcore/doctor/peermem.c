/* gpup2p doctor — peermem.*: the module that lets RDMA NICs register GPU memory (nvidia-peermem,
 * or the old nv_peer_mem), or the dma-buf path of the open kernel module. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/cuda.h"
#include "gpup2p/verbs.h"
#include "check.h"

int gp_doctor_peermem_mods(struct gp_doctor_ctx *c, int *nvpm, int *legacy)
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

	if (gp_doctor_peermem_mods(c, &nvpm, &legacy))
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

	if (gp_doctor_peermem_mods(c, &nvpm, &legacy))
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

/* Append "why" to the reasons list. */
static void reason(char *buf, size_t n, const char *why)
{
	size_t used = strlen(buf);

	if (used < n)
		snprintf(buf + used, n - used, "%s%s", used ? "; " : "", why);
}

/* A part that could not be learned. */
static void unknown(struct gp_doctor_dmabuf *d, const char *why)
{
	d->nunk++;
	reason(d->unk, sizeof(d->unk), why);
}

/* The live parts (CUDA's attribute, ibv_reg_dmabuf_mr): offline, or where libcuda or libibverbs
 * could not tell, they are unknown, never taken as there. */
static void dmabuf_live(struct gp_doctor_ctx *c, struct gp_doctor_dmabuf *d)
{
	const struct gp_cuda_probe *cu;
	const struct gp_verbs_probe *v;
	char t[320];

	if (!c->probe_libs) {
		unknown(d, "CUDA's DMA_BUF_SUPPORTED and libibverbs' ibv_reg_dmabuf_mr are not "
		       "probed offline");
		return;
	}
	cu = gp_doctor_cuda(c);
	v = gp_doctor_verbs(c);
	if (!cu || !cu->loaded) {
		snprintf(t, sizeof(t), "libcuda not loaded (%.200s): CUDA's DMA_BUF_SUPPORTED not read",
			 cu ? cu->why : "out of memory");
		unknown(d, t);
	} else if (cu->init != 0) {
		snprintf(t, sizeof(t), "cuInit failed (%.60s; see driver.cuda_init): CUDA's DMA_BUF_SUPPORTED not read",
			 cu->init_name[0] ? cu->init_name : "?");
		unknown(d, t);
	} else if (cu->dmabuf == 0) {
		snprintf(t, sizeof(t), "CUDA device %d says CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0", cu->dmabuf_dev);
		reason(d->why, sizeof(d->why), t);
	} else if (cu->dmabuf < 0) {
		unknown(d, "CUDA's DMA_BUF_SUPPORTED attribute could not be read");
	} else {
		reason(d->have, sizeof(d->have), "CUDA: DMA_BUF_SUPPORTED");
	}
	if (!v || !v->loaded)
		unknown(d, "libibverbs not loadable (see rdma.verbs_lib): ibv_reg_dmabuf_mr not "
		       "looked for");
	else if (!v->dmabuf_mr)
		reason(d->why, sizeof(d->why), "libibverbs lacks ibv_reg_dmabuf_mr (rdma-core before v34)");
	else
		reason(d->have, sizeof(d->have), "libibverbs: ibv_reg_dmabuf_mr");
}

int gp_doctor_dmabuf_state(struct gp_doctor_ctx *c, const char *subject, struct gp_doctor_dmabuf *d)
{
	const char *ver, *rel;
	char t[96];
	int err, major = 0, minor = 0, recent;
	long n;

	memset(d, 0, sizeof(*d));
	if (!(ver = gp_doctor_nv_version(c, &err))) {
		if (gp_doctor_module(c, "nvidia") == 0)
			gp_doctor_add(c, GP_SEV_SKIPPED, subject, "the nvidia module is not loaded (see driver.loaded)");
		else
			gp_doctor_missing(c, subject, "/proc/driver/nvidia/version", err);
		return -1;
	}
	if ((n = gp_doctor_read(c, "/proc/sys/kernel/osrelease", d->osrel, sizeof(d->osrel))) < 0) {
		gp_doctor_missing(c, subject, "/proc/sys/kernel/osrelease", (int)n);
		return -1;
	}
	d->open = gp_doctor_nv_open(ver);
	rel = gp_doctor_nv_release(c);
	if (d->open == 1 && rel[0] && atoi(rel) < 515)
		reason(d->why, sizeof(d->why), "open kernel module before R515 (no dma-buf export)");
	else if (d->open == 1)
		reason(d->have, sizeof(d->have), "open kernel module");
	else if (d->open == 0)
		reason(d->why, sizeof(d->why), "proprietary kernel module (dma-buf export needs the open one)");
	else
		unknown(d, "driver flavour (open or proprietary) not understood");
	if (sscanf(d->osrel, "%d.%d", &major, &minor) != 2) {
		snprintf(t, sizeof(t), "kernel release \"%.40s\" not understood", d->osrel);
		unknown(d, t);
	} else {
		recent = major > 5 || (major == 5 && minor >= 12);
		snprintf(t, sizeof(t), "kernel %d.%d%s", major, minor, recent ? "" : " (RDMA dma-buf registration since 5.12)");
		if (recent)
			reason(d->have, sizeof(d->have), t);
		else
			reason(d->why, sizeof(d->why), t);
	}
	dmabuf_live(c, d);
	d->usable = d->why[0] ? 0 : d->unk[0] ? -1 : 1;
	return 0;
}

void gp_doctor_dmabuf_ev(struct gp_finding *f, const struct gp_doctor_dmabuf *d)
{
	gp_finding_ev(f, "/proc/driver/nvidia/version", "%s", d->open == 1 ? "open" : d->open ? "unknown" : "proprietary");
	gp_finding_ev(f, "/proc/sys/kernel/osrelease", "%s", d->osrel);
	if (d->have[0])
		gp_finding_ev(f, "dma-buf parts there", "%s", d->have);
	if (d->why[0])
		gp_finding_ev(f, "dma-buf parts missing", "%s", d->why);
	if (d->unk[0])
		gp_finding_ev(f, "dma-buf parts unknown", "%s", d->unk);
}

/* Why a machine with GPUs has no NIC for GPUDirect RDMA. */
static const char *no_rdma(const struct gp_doctor_ctx *c)
{
	return gp_doctor_rdma_nics(c) ? "no RDMA NIC of its own: software RDMA only (rxe, siw), which never reaches "
	       "GPU memory" : "no RDMA NIC";
}

/* The peer-memory module the installed driver can load: nvidia-peermem ships with it since R470; before,
 * it is Mellanox's nv_peer_mem (MLNX_OFED, or the nv_peer_memory package built with DKMS). */
static void peermem_fix(struct gp_doctor_ctx *c, struct gp_finding *f)
{
	const char *rel = gp_doctor_nv_release(c);

	if (rel[0] && atoi(rel) < 470) {
		gp_finding_fix(f, "driver %s predates nvidia-peermem (R470): install Mellanox's nv_peer_mem "
			       "(nv_peer_memory, DKMS), modprobe nv_peer_mem, load it at boot (modules-load.d); or "
			       "upgrade the driver to R470+", rel);
		gp_finding_ev(f, "driver", "%s (nvidia-peermem ships from R470)", rel);
		return;
	}
	gp_finding_fix(f, "modprobe nvidia-peermem (gpup2p enable --peermem), and load it at boot (modules-load.d)");
}

static void check_missing(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	struct gp_doctor_dmabuf d;
	int nvpm, legacy, rdma = gp_doctor_rdma_hw_nics(c);

	if (!c->topo->ngpu || !rdma) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "nvidia_peermem", "%s", !c->topo->ngpu ? "no NVIDIA GPU" :
			      no_rdma(c));
		return;
	}
	if (gp_doctor_module(c, "nvidia") == 0) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "nvidia_peermem", "the nvidia module is not loaded (see driver.loaded)");
		return;
	}
	if (gp_doctor_peermem_mods(c, &nvpm, &legacy))
		return;
	if (nvpm || legacy) {
		f = gp_doctor_add(c, GP_SEV_OK, "nvidia_peermem", "%s is loaded: NICs can register GPU memory",
				  nvpm ? "nvidia_peermem" : "nv_peer_mem");
	} else {
		if (gp_doctor_dmabuf_state(c, "nvidia_peermem", &d))
			return;
		if (d.usable == 1) {
			f = gp_doctor_add(c, GP_SEV_OK, "nvidia_peermem", "no peer-memory module, but NICs can register "
					  "GPU memory through dma-buf (%s)", d.have);
		} else if (d.usable == 0) {
			f = gp_doctor_add(c, GP_SEV_WARNING, "nvidia_peermem", "%d RDMA NIC%s but no peer-memory module "
					  "and no dma-buf path (%s): GPUDirect RDMA is unavailable, transfers bounce through "
					  "host memory", rdma, rdma > 1 ? "s" : "", d.why);
			peermem_fix(c, f);
		} else {
			f = gp_doctor_add(c, GP_SEV_UNKNOWN, "nvidia_peermem", "no peer-memory module; whether NICs can "
					  "register GPU memory through dma-buf is unknown: %s", d.unk);
		}
		gp_doctor_dmabuf_ev(f, &d);
	}
	gp_finding_ev(f, "/proc/modules", "nvidia_peermem %s, nv_peer_mem %s", nvpm ? "loaded" : "absent",
		      legacy ? "loaded" : "absent");
}

static void check_dmabuf(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	struct gp_doctor_dmabuf d;

	if (!c->topo->ngpu || !gp_doctor_rdma_hw_nics(c)) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "dma-buf", "%s", !c->topo->ngpu ? "no NVIDIA GPU" : no_rdma(c));
		return;
	}
	if (gp_doctor_dmabuf_state(c, "dma-buf", &d))
		return;
	if (d.usable == 0) {
		f = gp_doctor_add(c, GP_SEV_INFO, "dma-buf", "the dma-buf GPUDirect RDMA path is not available: %s%s",
				  d.why, gp_doctor_module(c, "nvidia_peermem") == 1 ? " (nvidia_peermem serves GPUDirect RDMA)" : "");
		gp_finding_fix(f, "for dma-buf: the open kernel module (R515+), kernel 5.12+, rdma-core 34+; or keep "
			       "using nvidia-peermem");
	} else if (d.usable < 0 && !c->probe_libs && d.nunk == 1) {
		f = gp_doctor_add(c, GP_SEV_SKIPPED, "dma-buf", "the static parts are there (%s); CUDA and libibverbs "
				  "are probed live only", d.have);
	} else if (d.usable < 0) {
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, "dma-buf", "whether the dma-buf GPUDirect RDMA path is available is "
				  "unknown: %s", d.unk);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "dma-buf", "the dma-buf GPUDirect RDMA path is available: %s", d.have);
	}
	gp_doctor_dmabuf_ev(f, &d);
}

static const struct gp_doctor_check checks[] = {
	/* CUDA's dma-buf attribute and libibverbs' ibv_reg_dmabuf_mr (dmabuf_live): optional, the rest
	 * runs offline and under --no-cuda */
	{ "peermem.missing", "RDMA NICs and GPUs but no way for the NICs to reach GPU memory", GP_SRC_PROC | GP_SRC_SYSFS |
	  GP_SRC_OPT(GP_SRC_CUDA | GP_SRC_VERBS), 0, check_missing,
	  "Reads /proc/modules; without a peer-memory module, the dma-buf parts peermem.dmabuf checks. Warning "
	  "when GPUs and RDMA NICs are present and neither nvidia_peermem (nor nv_peer_mem) is loaded nor dma-buf "
	  "usable (a part missing); ok when dma-buf is; unknown when a part could not be learned (offline: CUDA "
	  "and libibverbs are not probed; live: libcuda or libibverbs not loadable). The fix follows the driver: "
	  "modprobe nvidia-peermem from R470, Mellanox's nv_peer_mem (or an upgrade) before." },
	{ "peermem.conflict", "nv_peer_mem and nvidia_peermem both loaded", GP_SRC_PROC, 0, check_conflict,
	  "Reads /proc/modules. Error when the old Mellanox nv_peer_mem and the driver's nvidia_peermem are both "
	  "loaded. Fix: unload and remove nv_peer_mem." },
	{ "peermem.legacy", "nv_peer_mem alone with a driver that ships nvidia-peermem", GP_SRC_PROC, 0, check_legacy,
	  "Reads /proc/modules and the driver version. Warning when nv_peer_mem is loaded without nvidia_peermem on a "
	  "driver of R470 or later (or of unknown version), which ships nvidia-peermem." },
	{ "peermem.dmabuf", "whether the dma-buf GPUDirect RDMA path is available", GP_SRC_PROC | GP_SRC_SYSFS |
	  GP_SRC_OPT(GP_SRC_CUDA | GP_SRC_VERBS), 0, check_dmabuf,
	  "Reads /proc/driver/nvidia/version (open kernel module) and /proc/sys/kernel/osrelease (5.12 or later); "
	  "live also CUDA's CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED and ibv_reg_dmabuf_mr in libibverbs. Info when "
	  "a part is missing, ok when all are there, unknown when none is missing but one could not be learned "
	  "(libcuda or libibverbs not loadable). Skipped without RDMA NICs, and offline when the static parts "
	  "are there." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_peermem, "peermem", "GPUDirect RDMA peer memory", checks);
