/* gpup2p doctor — kmod.*: this project's driver gpup2p.ko (loaded, version, device node), the NVIDIA
 * interface it needs (nvidia_p2p_get_pages), and whether modules can be loaded at all. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#ifndef GPUP2P_VERSION
#define GPUP2P_VERSION "0.0.0"
#endif

static void check_loaded(struct gp_doctor_ctx *c)
{
	int m = gp_doctor_module(c, "gpup2p");
	struct gp_finding *f;
	char ver[64];

	if (m < 0) {
		gp_doctor_missing(c, "gpup2p", "/proc/modules", m);
		return;
	}
	if (!m) {
		f = gp_doctor_add(c, GP_SEV_INFO, "gpup2p", "gpup2p.ko is not loaded (only pin, map and "
				  "gpup2p copy --via map need it)");
		gp_finding_fix(f, "gpup2p enable (after make kmod && make -C kmod install, or DKMS)");
		gp_finding_ev(f, "/proc/modules", "no gpup2p");
		return;
	}
	if (gp_doctor_read(c, "/sys/module/gpup2p/version", ver, sizeof(ver)) <= 0) {
		f = gp_doctor_add(c, GP_SEV_OK, "gpup2p", "gpup2p.ko is loaded (its version is not readable)");
	} else if (strcmp(ver, GPUP2P_VERSION)) {
		f = gp_doctor_add(c, GP_SEV_WARNING, "gpup2p", "gpup2p.ko %s is loaded but this tool is %s", ver,
				  GPUP2P_VERSION);
		gp_finding_fix(f, "gpup2p enable --disable; install the module of this version (make kmod && make -C kmod "
			       "install, or DKMS); gpup2p enable");
		gp_finding_ev(f, "/sys/module/gpup2p/version", "%s", ver);
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "gpup2p", "gpup2p.ko %s is loaded", ver);
		gp_finding_ev(f, "/sys/module/gpup2p/version", "%s", ver);
	}
}

static void check_node(struct gp_doctor_ctx *c)
{
	int m = gp_doctor_module(c, "gpup2p"), usable, rc;
	struct gp_finding *f;

	if (m < 0) {
		gp_doctor_missing(c, "/dev/gpup2p", "/proc/modules", m);
		return;
	}
	if (!m) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "/dev/gpup2p", "gpup2p.ko is not loaded");
		return;
	}
	rc = gp_doctor_devnode(c, "/dev/gpup2p", &usable);
	if (rc < 0) {
		gp_doctor_missing(c, "/dev/gpup2p", "/dev", rc);
	} else if (!rc) {
		f = gp_doctor_add(c, GP_SEV_WARNING, "/dev/gpup2p", "gpup2p.ko is loaded but /dev/gpup2p is missing");
		gp_finding_fix(f, "gpup2p enable (creates it), and install udev/60-gpup2p.rules so udev makes it at load");
	} else if (!usable) {
		f = gp_doctor_add(c, GP_SEV_WARNING, "/dev/gpup2p", "this user cannot open /dev/gpup2p");
		gp_finding_fix(f, "add the user to the group the udev rule names (video by default)");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "/dev/gpup2p", "/dev/gpup2p is present%s", c->root->live ? " and usable" : "");
	}
}

static void check_p2p_api(struct gp_doctor_ctx *c)
{
	int nv = gp_doctor_module(c, "nvidia"), has;
	struct gp_finding *f;

	if (!c->topo->ngpu || nv == 0) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "nvidia", c->topo->ngpu ? "the nvidia module is not loaded"
								       : "no NVIDIA GPU on the PCI bus");
		return;
	}
	has = gp_doctor_kallsyms_has(c, GP_DOCTOR_P2P_SYM);
	if (has < 0) {
		gp_doctor_missing(c, "nvidia", "/proc/kallsyms", has);
	} else if (has) {
		f = gp_doctor_add(c, GP_SEV_OK, "nvidia", "the nvidia module provides nvidia_p2p_get_pages");
		gp_finding_ev(f, "/proc/kallsyms", "nvidia_p2p_get_pages");
	} else {
		f = gp_doctor_add(c, GP_SEV_WARNING, "nvidia", "nvidia_p2p_get_pages is not in the kernel: this driver "
				  "build (%s) cannot pin GPU memory for gpup2p.ko, nvidia-peermem or GDRCopy",
				  gp_doctor_nv_release(c)[0] ? gp_doctor_nv_release(c) : "version unknown");
		gp_finding_fix(f, "install a datacenter driver build that exports the nvidia_p2p_* interface (both the open "
			       "and the proprietary module do)");
		gp_finding_ev(f, "/proc/kallsyms", "no nvidia_p2p_get_pages");
	}
}

static void check_loadable(struct gp_doctor_ctx *c)
{
	char dis[16], sig[16], msg[256] = "";
	long nd = gp_doctor_read(c, "/proc/sys/kernel/modules_disabled", dis, sizeof(dis));
	long ns = gp_doctor_read(c, "/sys/module/module/parameters/sig_enforce", sig, sizeof(sig));
	struct gp_finding *f;
	size_t used = 0;

	if (nd <= 0 && ns <= 0) {
		gp_doctor_missing(c, "kernel", "/proc/sys/kernel/modules_disabled", nd < 0 ? (int)nd : -ENODATA);
		return;
	}
	if (nd > 0 && strcmp(dis, "0"))
		used += (size_t)snprintf(msg, sizeof(msg), "module loading is disabled until reboot (modules_disabled=%s): "
					 "gpup2p.ko and nvidia-peermem cannot be loaded now", dis);
	if (ns > 0 && !strcmp(sig, "Y"))
		snprintf(msg + used, sizeof(msg) - used, "%sthe kernel loads signed modules only: sign gpup2p.ko (DKMS "
			 "with a MOK key)", used ? "; " : "");
	if (msg[0]) {
		f = gp_doctor_add(c, GP_SEV_INFO, "kernel", "%s", msg);
		gp_finding_fix(f, "load the modules needed at boot (modules-load.d) before modules_disabled is set; sign "
			       "out-of-tree modules (dkms with mok.pub enrolled)");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "kernel", "modules can be loaded");
	}
	if (nd > 0)
		gp_finding_ev(f, "/proc/sys/kernel/modules_disabled", "%s", dis);
	if (ns > 0)
		gp_finding_ev(f, "/sys/module/module/parameters/sig_enforce", "%s", sig);
}

static const struct gp_doctor_check checks[] = {
	{ "kmod.loaded", "gpup2p.ko loaded, and of this tool's version", GP_SRC_PROC | GP_SRC_SYSFS, 0, check_loaded,
	  "Reads /proc/modules and /sys/module/gpup2p/version. Info when gpup2p.ko is not loaded (only pin, map and "
	  "gpup2p copy --via map need it); warning when its version differs from the tool's." },
	{ "kmod.node", "/dev/gpup2p missing or unusable while gpup2p.ko is loaded", GP_SRC_PROC | GP_SRC_DEV, 0, check_node,
	  "Looks for /dev/gpup2p when gpup2p.ko is loaded. Warning when it is missing (no udev rule) or this user "
	  "cannot open it." },
	{ "kmod.nv_p2p_api", "the nvidia module lacks nvidia_p2p_get_pages", GP_SRC_PROC, 0, check_p2p_api,
	  "Looks for nvidia_p2p_get_pages in /proc/kallsyms when nvidia is loaded. Warning when it is missing: "
	  "neither gpup2p.ko, nvidia-peermem nor GDRCopy can pin GPU memory with this driver build." },
	{ "kmod.loadable", "modules cannot be loaded (modules_disabled, signatures enforced)", GP_SRC_PROC | GP_SRC_SYSFS, 0,
	  check_loadable,
	  "Reads /proc/sys/kernel/modules_disabled and /sys/module/module/parameters/sig_enforce. Info when module "
	  "loading is disabled or only signed modules load: gpup2p.ko and nvidia-peermem need planning then." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_kmod, "kmod", "gpup2p.ko and module loading", checks);
