/* gpup2p doctor — gpu.*: each GPU as the driver sees it: listed by NVML, excluded by the driver, ECC
 * retirement and row remapping, MIG, virtualization and compute mode (NVML facts, live or recorded);
 * Xid events in the kernel log (gpu_xid.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

const struct gp_gpu_state *gp_doctor_counters(struct gp_doctor_ctx *c, const struct gp_gpu_info *g)
{
	long i = g - c->facts->gpus;

	if (!c->active || !c->probe_libs || i < 0 || i >= c->facts->n)
		return &g->st;
	if (!c->counters_read) {
		c->counters_read = 1;
		c->counters = calloc((size_t)c->facts->n + 1, sizeof(*c->counters));
		if (c->counters && gp_gpu_nvml_recount_facts(c->facts, c->counters, GP_DOCTOR_COUNTER_WINDOW_S)) {
			free(c->counters);
			c->counters = NULL;
		}
	}
	return c->counters ? &c->counters[i] : &g->st;
}

static void check_visible(struct gp_doctor_ctx *c)
{
	if (gp_doctor_no_gpu(c) || gp_doctor_no_nvml(c, "system"))
		return;
	for (int i = 0; i < c->topo->ngpu; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);
		const char *name = c->topo->devs[i].name;
		struct gp_finding *f;

		if (d->vendor != 0x10de)
			continue; /* a --match device: NVML does not list it */
		if (gp_gpu_find(c->facts, d->bdf)) {
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s is in NVML's list", name);
		} else if (strcmp(d->driver, "nvidia")) {
			f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s is bound to %s, not nvidia (see driver.gpu_bound)", name,
					  d->driver[0] ? d->driver : "no driver");
		} else if (gp_doctor_gpu_excluded(c, d->bdf) == 1) {
			f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s is excluded by the driver (see gpu.excluded)", name);
		} else {
			f = gp_doctor_add(c, GP_SEV_ERROR, d->bdf, "%s is bound to nvidia but NVML does not list it: it fell off "
					  "the bus or failed to initialise", name);
			gp_finding_fix(f, "dmesg | grep -iE 'NVRM|Xid' says why; then nvidia-smi -r -i %s (GPU reset) or a "
				       "reboot; a GPU that keeps falling off needs reseating or replacing", d->bdf);
		}
		gp_finding_bdf(f, d->bdf);
		gp_finding_ev(f, "nvml", "%d GPUs listed", c->facts->n);
	}
}

static void check_excluded(struct gp_doctor_ctx *c)
{
	int bound = 0;

	if (gp_doctor_no_gpu(c))
		return;
	for (int i = 0; i < c->topo->ngpu; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);
		const char *name = c->topo->devs[i].name;
		struct gp_finding *f;
		int x;

		if (strcmp(d->driver, "nvidia"))
			continue;
		bound++;
		x = gp_doctor_gpu_excluded(c, d->bdf);
		if (x == 1) {
			f = gp_doctor_add(c, GP_SEV_WARNING, d->bdf, "%s is excluded by the driver (NVreg_ExcludedGpus): "
					  "bound to nvidia but not usable", name);
			gp_finding_fix(f, "if it should be used: remove its UUID from NVreg_ExcludedGpus (/etc/modprobe.d), "
				       "rebuild the initramfs and reload the driver");
		} else if (x == 0 || x == 2) {
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s is not excluded%s", name,
					  x ? " (no \"GPU Excluded\" line: a driver without GPU exclusion)" : "");
		} else {
			char what[96];

			snprintf(what, sizeof(what), "/proc/driver/nvidia/gpus/%s/information", d->bdf);
			f = gp_doctor_missing(c, d->bdf, what, x);
		}
		gp_finding_bdf(f, d->bdf);
	}
	if (!bound)
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no GPU bound to nvidia (see driver.gpu_bound)");
}

static void ecc_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	const char *name = c->topo->devs[i].name;
	const struct gp_gpu_state *s;
	struct gp_finding *f;
	long long unc;

	s = &g->st;
	unc = s->ecc_unc_volatile;
	/* Ampere and later remap rows; older GPUs retire pages: one of the two applies */
	if (s->remap_failed < 0 && s->retired_pending < 0 && unc <= 0) {
		gp_doctor_state_missing(c, i, s->remap_failed > s->retired_pending ? s->remap_failed : s->retired_pending,
					"ECC row remapping or page retirement state");
		return;
	}
	if (s->remap_failed > 0) {
		f = gp_doctor_add(c, GP_SEV_ERROR, g->bdf, "%s: an ECC row remapping failed: the memory has more bad "
				  "rows than spares", name);
		gp_finding_fix(f, "drain the node and have the GPU replaced (RMA); nvidia-smi -q -d ROW_REMAPPER "
			       "shows the counts");
	} else if (s->remap_pending > 0 || s->retired_pending > 0) {
		f = gp_doctor_add(c, GP_SEV_ERROR, g->bdf, "%s: %s waits for a GPU reset: until then the bad memory "
				  "stays in use and jobs on this GPU (its P2P and GPUDirect peers too) can fail", name,
				  s->remap_pending > 0 ? "an ECC row remapping" : "an ECC page retirement");
		gp_finding_fix(f, "drain the node, then reset the GPU when idle: nvidia-smi -r -i %s (or reboot)",
			       g->bdf);
	} else if (unc > 0) {
		f = gp_doctor_add(c, GP_SEV_WARNING, g->bdf, "%s: %lld uncorrected ECC error%s since the driver loaded: "
				  "the process that hit %s was killed (Xid 48/94/95) and the memory may be failing", name, unc,
				  unc == 1 ? "" : "s", unc == 1 ? "it" : "them");
		gp_finding_fix(f, "drain the node; nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT shows the counts; "
			       "reset the GPU when idle (nvidia-smi -r -i %s) and replace it if they come back", g->bdf);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: no pending or failed ECC %s%s", name,
				  s->remap_failed >= 0 ? "row remapping" : s->retired_pending >= 0 ? "page retirement" :
				  "repair", unc == 0 ? ", no uncorrected ECC error since the driver loaded" : "");
	}
	gp_finding_bdf(f, g->bdf);
	if (s->remap_failed >= 0)
		gp_finding_ev(f, "row remapper", "pending %d, failure %d", s->remap_pending, s->remap_failed);
	if (s->retired_pending >= 0)
		gp_finding_ev(f, "retired pages pending", "%d", s->retired_pending);
	if (unc >= 0)
		gp_finding_ev(f, "volatile uncorrected ECC errors", "%lld", unc);
}

static void check_ecc(struct gp_doctor_ctx *c)
{
	gp_doctor_each_nvml_gpu(c, ecc_one);
}

static void mig_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	const char *name = c->topo->devs[i].name;
	struct gp_finding *f;

	if (gp_doctor_state_missing(c, i, g->st.mig, "MIG mode"))
		return;
	if (g->st.mig == 1) {
		f = gp_doctor_add(c, GP_SEV_INFO, g->bdf, "%s: MIG enabled: CUDA sees MIG instances, and there is no "
				  "P2P between them or with other GPUs", name);
		gp_finding_fix(f, "for P2P: nvidia-smi -i %s -mig 0 (with no process on the GPU), then reset it",
			       g->bdf);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: MIG disabled", name);
	}
	gp_finding_bdf(f, g->bdf);
	gp_finding_ev(f, "mig", "%d", g->st.mig);
}

static void check_mig(struct gp_doctor_ctx *c)
{
	gp_doctor_each_nvml_gpu(c, mig_one);
}

/* 1 when every pair of GPUs is joined by NVLink (or there is one GPU). */
static int all_nvlinked(const struct gp_doctor_ctx *c)
{
	for (int a = 0; a < c->topo->ngpu; a++)
		for (int b = a + 1; b < c->topo->ngpu; b++)
			if (gp_topo_link_at(c->topo, a, b).nvlinks <= 0)
				return 0;
	return 1;
}

static void virtualization_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	static const char *const modes[] = { "none (bare metal)", "pass-through", "vGPU guest", "vGPU host",
					     "vSGA host" };

	const char *name = c->topo->devs[i].name, *mode;
	struct gp_finding *f;
	int v;

	if (gp_doctor_state_missing(c, i, g->st.virt, "virtualization mode"))
		return;
	v = g->st.virt;
	mode = v < (int)(sizeof(modes) / sizeof(modes[0])) ? modes[v] : "unknown";
	if (v == 0) {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: not virtualized", name);
	} else if (v == 1 && all_nvlinked(c) && !c->topo->nnic) {
		/* in a VM, but P2P runs over NVLink, which the hypervisor does not sit on */
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: pass-through to this VM; %s", name,
				  c->topo->ngpu > 1 ? "every GPU pair is NVLink-joined, so P2P does not cross the "
						      "hypervisor's PCIe" : "no PCIe P2P to depend on");
	} else {
		f = gp_doctor_add(c, GP_SEV_INFO, g->bdf, "%s: %s: PCIe P2P and GPUDirect RDMA depend on the "
				  "hypervisor (ACS, IOMMU and the virtual PCIe topology it exposes)", name, mode);
		gp_finding_fix(f, "if P2P fails here: ask the hypervisor for the GPUs (and NICs) on one virtual "
			       "switch with ATS/ACS set up for P2P, or use NVLink");
	}
	gp_finding_bdf(f, g->bdf);
	gp_finding_ev(f, "virtualization mode", "%s (%d)", mode, v);
}

static void check_virtualization(struct gp_doctor_ctx *c)
{
	gp_doctor_each_nvml_gpu(c, virtualization_one);
}

static void compute_mode_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	static const char *const modes[] = { "Default", "Exclusive_Thread", "Prohibited", "Exclusive_Process" };

	const char *name = c->topo->devs[i].name, *mode;
	struct gp_finding *f;

	if (gp_doctor_state_missing(c, i, g->st.compute, "compute mode"))
		return;
	mode = g->st.compute < 4 ? modes[g->st.compute] : "unknown";
	if (g->st.compute == 0) {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: compute mode Default", name);
	} else if (g->st.compute == 2) {
		f = gp_doctor_add(c, GP_SEV_WARNING, g->bdf, "%s: compute mode Prohibited: no process can create a "
				  "CUDA context on it", name);
		gp_finding_fix(f, "nvidia-smi -i %s -c DEFAULT (as root)", g->bdf);
	} else {
		/* a scheduler's choice (one process per GPU); P2P from that process still works */
		f = gp_doctor_add(c, GP_SEV_INFO, g->bdf, "%s: compute mode %s: one process at a time may use it "
				  "(another one fails to create a context)", name, mode);
		gp_finding_fix(f, "if that is not the scheduler's intent: nvidia-smi -i %s -c DEFAULT", g->bdf);
	}
	gp_finding_bdf(f, g->bdf);
	gp_finding_ev(f, "compute mode", "%s (%d)", mode, g->st.compute);
}

static void check_compute_mode(struct gp_doctor_ctx *c)
{
	gp_doctor_each_nvml_gpu(c, compute_mode_one);
}

static const struct gp_doctor_check checks[] = {
	{ "gpu.visible", "a GPU on the PCI bus that NVML does not list", GP_SRC_SYSFS | GP_SRC_NVML, 0, check_visible,
	  "Compares the NVIDIA GPUs on the PCI bus that are bound to nvidia with the GPUs NVML lists (live, or the "
	  "snapshot's facts). Error for a GPU NVML does not list: it fell off the bus or failed to initialise "
	  "(dmesg shows the Xid). GPUs excluded on purpose or bound to another driver are left to gpu.excluded and "
	  "driver.gpu_bound." },
	{ "gpu.excluded", "a GPU excluded by the driver", GP_SRC_PROC, 0, check_excluded,
	  "Reads \"GPU Excluded\" in /proc/driver/nvidia/gpus/BDF/information. Warning for an excluded GPU "
	  "(NVreg_ExcludedGpus): bound to nvidia but unusable. Fix: remove it from the list if that was a mistake." },
	{ "gpu.ecc", "ECC repair pending or failed, uncorrected ECC errors", GP_SRC_NVML, 0, check_ecc,
	  "Reads NVML's row remapper state (Ampere and later) or retired-pages-pending state (older GPUs), and the "
	  "volatile count of uncorrected ECC errors (since the driver loaded). Error when a remapping failed (out "
	  "of spare rows: replace the GPU) or one waits for a GPU reset (drain, reset the GPU when idle or "
	  "reboot); warning when uncorrected errors were counted. ECC off or not supported: not judged." },
	{ "gpu.mig", "MIG enabled", GP_SRC_NVML, 0, check_mig,
	  "Reads the current MIG mode (NVML). Info when enabled: CUDA sees MIG instances and there is no P2P "
	  "between them or with other GPUs." },
	{ "gpu.virtualization", "pass-through or vGPU", GP_SRC_NVML, 0, check_virtualization,
	  "Reads NVML's virtualization mode. Info for a vGPU or for pass-through where PCIe P2P or GPUDirect "
	  "matter (GPU pairs without NVLink, or NICs): the hypervisor's ACS, IOMMU and virtual topology decide "
	  "whether they work. OK on bare metal, and in a VM where every GPU pair is NVLink-joined and no NIC is "
	  "passed in." },
	{ "gpu.compute_mode", "compute mode Prohibited or exclusive", GP_SRC_NVML, 0, check_compute_mode,
	  "Reads the compute mode (NVML). Warning for Prohibited (no CUDA context at all); info for the exclusive "
	  "modes, usually a scheduler's choice: one process per GPU, whose P2P still works." },
	{ "gpu.xid", "Xid events in the kernel log since boot (gpup2p doctor --kmsg)", GP_SRC_KMSG, 0,
	  gp_doctor_check_xid,
	  "With gpup2p doctor --kmsg only (the kernel log may hold private data): reads /dev/kmsg from its "
	  "oldest record, without "
	  "blocking, and counts the NVIDIA driver's \"NVRM: Xid (PCI:...): N\" lines per GPU. Each code is judged by "
	  "NVIDIA's Xid catalogue for Ampere and later (all 172 codes) and its immediate action: error where the GPU "
	  "needs a reset or a power cycle (RESET_GPU, RESTART_BM, the ECC and NVLink workflows), and for an Xid 154 "
	  "naming a recovery action (drain P2P, reset, reboot); warning where an application died (RESTART_APP) or "
	  "the board needs attention (54: auxiliary power); info for what the catalogue ignores (43, 45, 63, 92). The "
	  "worst code sets the fix: 79 (fallen off the bus) says power-cycle, then check power, riser or retimer "
	  "and the link before reseating or RMA. A code the catalogue does not list: warning, a generic fix. "
	  "Under gpup2p --root ROOT doctor --kmsg it reads ROOT/dev/kmsg, a saved dmesg or kmsg dump: "
	  "snapshots do not capture the log." },
	{ "gpu.throttle", "clocks slowed by heat, power brake or hardware slowdown", GP_SRC_NVML, 0, gp_doctor_check_throttle,
	  "Reads NVML's clock event reasons (nvmlDeviceGetCurrentClocksEventReasons; ThrottleReasons before R535), "
	  "live or as the snapshot recorded them. Warning, naming the reason and its fix, for HW slowdown, HW "
	  "thermal slowdown, HW power brake and SW thermal slowdown: a healthy GPU never shows them, at rest or "
	  "busy, and they slow copies and kernels (cooling; the PSUs and the BMC's power policy). Idle, "
	  "applications clocks, SW power cap, sync boost and display clock are evidence only: a GPU at rest "
	  "clocks down and one at full load sits at its power limit. With gpup2p doctor --active (live), each "
	  "GPU is also kept "
	  "busy with host->GPU copies (1 GiB) while another thread samples the reasons and its PCIe link every 2 "
	  "ms: a link below the speed or width both ends support under that load is a warning (at rest GPUs "
	  "train the link down: pcie.link_speed's info); the SW power cap or an applications clocks setting "
	  "under load is an info." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_gpu, "gpu", "the GPUs as the driver sees them", checks);
