/* gpup2p doctor — driver.* checks that ask the driver's user-space side: the version the kernel module
 * and NVML report (and whether the CPU can mmap a dma-buf, probed through libcuda), persistence mode and
 * NVSwitch fabric state (NVML facts), and cuInit (libcuda, live only). Registered in driver.c's table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpup2p/cuda.h"
#include "gpup2p/pinmap.h"
#include "check.h"

const struct gp_cuda_probe *gp_doctor_cuda(struct gp_doctor_ctx *c)
{
	if (c->cuda_probe)
		return c->cuda_probe;
	if (c->no_cuda && (c->cuda_probe = calloc(1, sizeof(*c->cuda_probe)))) {
		c->cuda_probe->devices = -1;
		c->cuda_probe->dmabuf = -1;
		snprintf(c->cuda_probe->why, sizeof(c->cuda_probe->why), "not loaded: gpup2p doctor --no-cuda");
		snprintf(c->src.cuda_why, sizeof(c->src.cuda_why), "%s", c->cuda_probe->why);
		return c->cuda_probe;
	}
	if (!(c->cuda_probe = gp_doctor_pre_cuda(c->pre)) && (c->cuda_probe = calloc(1, sizeof(*c->cuda_probe))))
		gp_cuda_probe(c->cuda_probe);
	if (c->cuda_probe) {
		c->src.cuda = c->cuda_probe->loaded;
		snprintf(c->src.cuda_why, sizeof(c->src.cuda_why), "%s", c->cuda_probe->loaded ? "" : c->cuda_probe->why);
	}
	return c->cuda_probe;
}

/* Can the CPU mmap a dma-buf of GPU memory (CUDA driver API 13030 and later, as GDRCopy 2.6 uses it)?
 * Probed as `gpup2p enable --status` does (gp_pinmap_dmabuf_probe: export 64 KiB of the first GPU, mmap
 * it), never inferred from a version: live only, with --active (it costs a context, ~0.25 s), and only
 * when a selected check loads libcuda anyway.
 * 1 yes, 0 no, -1 not probed; why says what the probe said, or why it did not run. */
static int dmabuf_mmap(struct gp_doctor_ctx *c, char *why, size_t n)
{
	const struct gp_cuda_probe *p;
	struct gp_err e = { 0 };
	struct gp_cuda *cu;
	int ok;

	if (!c->root->live && !c->probe_libs) {
		snprintf(why, n, "not probed: offline");
		return -1;
	}
	if (!c->active) {
		snprintf(why, n, "not probed: the probe creates a CUDA context and exports GPU memory; "
			 "gpup2p doctor --active runs it");
		return -1;
	}
	if (!c->cuda_wanted) {
		snprintf(why, n, "not probed: no selected check loads libcuda (driver.cuda_init skipped)");
		return -1;
	}
	if (!(p = gp_doctor_cuda(c)) || !p->loaded || p->init || p->devices <= 0) {
		snprintf(why, n, "not probed: cuInit did not succeed (see driver.cuda_init)");
		return -1;
	}
	if (!(cu = calloc(1, sizeof(*cu)))) {
		snprintf(why, n, "not probed: out of memory");
		return -1;
	}
	if (gp_cuda_open_gpus(cu, 1, &e)) {
		snprintf(why, n, "not probed: %s", e.msg);
		free(cu);
		return -1;
	}
	ok = gp_pinmap_dmabuf_probe(cu, 0, why, n);
	gp_cuda_close(cu);
	free(cu);
	return ok;
}

void gp_doctor_check_version(struct gp_doctor_ctx *c)
{
	char mmap_why[512];
	int mmap_ok;
	char kernel[32] = "";
	const char *v, *user = c->facts->available ? c->facts->driver : "", *rel;
	struct gp_finding *f;
	int err, major;

	if (gp_doctor_no_gpu(c))
		return;
	v = gp_doctor_nv_version(c, &err);
	if (v)
		snprintf(kernel, sizeof(kernel), "%s", gp_doctor_nv_release(c));
	if (kernel[0] && user[0] && strcmp(kernel, user)) {
		f = gp_doctor_add(c, GP_SEV_ERROR, "nvidia", "the kernel module is %s but NVML (user space) is %s: CUDA and "
				  "NVML fail with \"driver/library version mismatch\"", kernel, user);
		gp_finding_fix(f, "reboot (or unload and reload every nvidia module) after a driver upgrade");
	} else if (!c->facts->available && strstr(c->facts->why, "ismatch")) {
		f = gp_doctor_add(c, GP_SEV_ERROR, "nvidia", "NVML refused to start (%s): the user-space driver and the "
				  "kernel module%s%s differ", c->facts->why, kernel[0] ? " " : "", kernel);
		gp_finding_fix(f, "reboot (or unload and reload every nvidia module) after a driver upgrade");
	} else if (!(rel = kernel[0] ? kernel : user)[0]) {
		if (gp_doctor_module(c, "nvidia") == 0)
			gp_doctor_add(c, GP_SEV_SKIPPED, "nvidia", "the nvidia module is not loaded (see driver.loaded)");
		else
			gp_doctor_missing(c, "nvidia", "/proc/driver/nvidia/version", err);
		return;
	} else if ((major = atoi(rel)) < 470) {
		f = gp_doctor_add(c, GP_SEV_INFO, "nvidia", "driver %s predates R470: no nvidia-peermem (GPUDirect RDMA "
				  "needs the old nv_peer_mem) and no dma-buf export", rel);
		gp_finding_fix(f, "upgrade to a current data-center driver (R535 or later)");
	} else {
		mmap_ok = dmabuf_mmap(c, mmap_why, sizeof(mmap_why));
		f = gp_doctor_add(c, GP_SEV_OK, "nvidia", "driver %s: ships nvidia-peermem (R470+)%s; CPU mmap of a "
				  "dma-buf (CUDA driver API 13.3+, GDRCopy 2.6): %s", rel,
				  major >= 515 ? "; dma-buf export with the open module (R515+)" : "",
				  mmap_ok > 0 ? "works (probed)" : mmap_ok == 0 ? "not available (probed)" : "not probed");
		gp_finding_ev(f, "dma-buf cpu mmap", "%s%s", mmap_ok > 0 ? "works: " : mmap_ok == 0 ? "fails: " : "",
			      mmap_why);
		if (c->cuda_probe && c->cuda_probe->driver_version)
			gp_finding_ev(f, "cuDriverGetVersion", "%d", c->cuda_probe->driver_version);
	}
	if (kernel[0])
		gp_finding_ev(f, "/proc/driver/nvidia/version", "%s", kernel);
	if (user[0])
		gp_finding_ev(f, "nvml", "%s", user);
}

static void persistence_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	const char *name = c->topo->devs[i].name;
	struct gp_finding *f;

	if (gp_doctor_state_missing(c, i, g->st.persistence, "persistence mode"))
		return;
	if (g->st.persistence) {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: persistence mode on", name);
	} else {
		f = gp_doctor_add(c, GP_SEV_WARNING, g->bdf, "%s: persistence mode off: the driver tears the GPU down "
				  "when the last client exits (each job's first CUDA call pays seconds, state such "
				  "as application clocks is lost)", name);
		gp_finding_fix(f, "systemctl enable --now nvidia-persistenced (or nvidia-smi -pm 1 until reboot)");
	}
	gp_finding_bdf(f, g->bdf);
	gp_finding_ev(f, "persistence mode", "%s", g->st.persistence ? "Enabled" : "Disabled");
}

void gp_doctor_check_persistence(struct gp_doctor_ctx *c)
{
	gp_doctor_each_nvml_gpu(c, persistence_one);
}

static void fabric_one(struct gp_doctor_ctx *c, int i, const struct gp_gpu_info *g)
{
	static const char *const states[] = { "not supported", "not started", "in progress", "completed" };
	const char *name = c->topo->devs[i].name;
	struct gp_finding *f;
	int s = g->st.fabric;

	if (s == GP_GPU_NA || s == 0 || gp_doctor_state_missing(c, i, s, "NVSwitch fabric state"))
		return; /* not an NVSwitch system: said once, by the caller */
	if (s == 3 && g->st.fabric_status == 0) {
		f = gp_doctor_add(c, GP_SEV_OK, g->bdf, "%s: NVSwitch fabric registration completed", name);
	} else if (s == 3) {
		f = gp_doctor_add(c, GP_SEV_ERROR, g->bdf, "%s: NVSwitch fabric registration completed with an error "
				  "(NVML status %d): P2P over NVLink is unavailable", name, g->st.fabric_status);
		gp_finding_fix(f, "journalctl -u nvidia-fabricmanager says why; restart it, then reset the GPUs");
	} else if (s == 2) {
		f = gp_doctor_add(c, GP_SEV_WARNING, g->bdf, "%s: NVSwitch fabric registration in progress: CUDA waits "
				  "or fails until it completes", name);
		gp_finding_fix(f, "wait a minute and run doctor again; if it stays: journalctl -u nvidia-fabricmanager");
	} else {
		f = gp_doctor_add(c, GP_SEV_ERROR, g->bdf, "%s: NVSwitch fabric %s: nvidia-fabricmanager has not "
				  "registered this GPU, so CUDA cannot use it", name, s < 4 ? states[s] : "state unknown");
		gp_finding_fix(f, "systemctl enable --now nvidia-fabricmanager (its version must match the driver's)");
	}
	gp_finding_bdf(f, g->bdf);
	gp_finding_ev(f, "fabric state", "%s (%d)", s < 4 ? states[s] : "?", s);
	if (g->st.fabric_status >= 0)
		gp_finding_ev(f, "fabric status", "%d", g->st.fabric_status);
}

void gp_doctor_check_fabric(struct gp_doctor_ctx *c)
{
	int before = c->out.n;

	gp_doctor_each_nvml_gpu(c, fabric_one);
	if (c->out.n == before)
		gp_doctor_add(c, GP_SEV_SKIPPED, "system", "no NVSwitch fabric (NVML: not supported on these GPUs)");
}

void gp_doctor_check_cuda_init(struct gp_doctor_ctx *c)
{
	const struct gp_cuda_probe *p;
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	struct gp_finding *f;
	int bound = 0;

	if (gp_doctor_no_gpu(c))
		return;
	for (int i = 0; i < c->topo->ngpu; i++)
		bound += !strcmp(gp_doctor_dev(c, i)->driver, "nvidia");
	if (!bound) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "libcuda", "no GPU bound to nvidia (see driver.gpu_bound)");
		return;
	}
	if (!(p = gp_doctor_cuda(c))) {
		c->out.nomem = 1;
		return;
	}
	if (!p->loaded) {
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, "libcuda", "libcuda could not be loaded: %s", p->why);
		gp_finding_ev(f, "dlopen", "%s", p->why);
		return;
	}
	if (p->init == 0 && p->devices > 0) {
		f = gp_doctor_add(c, GP_SEV_OK, "libcuda", "cuInit succeeded: %d device%s, driver API %d.%d", p->devices,
				  p->devices > 1 ? "s" : "", p->driver_version / 1000, p->driver_version % 1000 / 10);
	} else {
		f = gp_doctor_add(c, GP_SEV_ERROR, "libcuda", "cuInit failed: %s (%d)%s", p->init ? p->init_name : "no device",
				  p->init, vis ? " with CUDA_VISIBLE_DEVICES set" : "");
		if (p->init == 100 && vis)
			gp_finding_fix(f, "CUDA_VISIBLE_DEVICES=\"%s\" hides every GPU: unset it or name existing GPUs", vis);
		else if (p->init == 803 || p->init == 804)
			gp_finding_fix(f, "libcuda and the kernel module come from different drivers: reinstall one driver "
				       "version (and the matching cuda-compat, if any), then reboot");
		else
			gp_finding_fix(f, "dmesg | grep -iE 'NVRM|Xid' and nvidia-smi say why; check driver.* and gpu.* above");
	}
	gp_finding_ev(f, "cuInit", "%s (%d)", p->init_name, p->init);
	if (p->devices >= 0)
		gp_finding_ev(f, "cuDeviceGetCount", "%d", p->devices);
	if (vis)
		gp_finding_ev(f, "CUDA_VISIBLE_DEVICES", "%s", vis);
}
