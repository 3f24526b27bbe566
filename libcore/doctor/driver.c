/* gpup2p doctor — driver.*: the NVIDIA kernel driver (loaded, bound, nouveau, nvidia_uvm, open or
 * proprietary module, module parameters, device nodes). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "gpup2p/buf.h"

/* GPUs bound to driver `drv` (NULL: to any driver other than nvidia). */
static int gpus_bound(const struct gp_doctor_ctx *c, const char *drv)
{
	int n = 0;

	for (int i = 0; i < c->topo->ngpu; i++) {
		const char *d = gp_doctor_dev(c, i)->driver;

		n += drv ? !strcmp(d, drv) : strcmp(d, "nvidia") != 0;
	}
	return n;
}

static void check_loaded(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	int m, bound;

	if (gp_doctor_no_gpu(c))
		return;
	m = gp_doctor_module(c, "nvidia");
	bound = gpus_bound(c, "nvidia");
	if (m == 1) {
		f = gp_doctor_add(c, GP_SEV_OK, "nvidia", "the nvidia module is loaded");
		gp_finding_ev(f, "/proc/modules", "nvidia");
	} else if (m == 0) {
		f = gp_doctor_add(c, GP_SEV_ERROR, "nvidia", "%d NVIDIA GPU%s on the PCI bus but the nvidia module is not loaded",
				  c->topo->ngpu, c->topo->ngpu > 1 ? "s" : "");
		gp_finding_ev(f, "/proc/modules", "no nvidia");
		gp_finding_fix(f, "modprobe nvidia; if it fails, dmesg | grep -i nvrm says why (Secure Boot signature, "
			       "kernel/driver version mismatch, nouveau holding the GPU)");
	} else if (bound) {
		f = gp_doctor_add(c, GP_SEV_OK, "nvidia", "%d GPU%s bound to the nvidia driver (module list not read)", bound,
				  bound > 1 ? "s" : "");
		gp_finding_ev(f, "driver link", "nvidia");
	} else {
		gp_doctor_missing(c, "nvidia", "/proc/modules", m);
	}
}

static void check_gpu_bound(struct gp_doctor_ctx *c)
{
	int nv;

	if (gp_doctor_no_gpu(c))
		return;
	nv = gp_doctor_module(c, "nvidia");
	for (int i = 0; i < c->topo->ngpu; i++) {
		const struct gp_pci_dev *d = gp_doctor_dev(c, i);
		const char *name = c->topo->devs[i].name;
		struct gp_finding *f;

		if (!strcmp(d->driver, "nvidia")) {
			f = gp_doctor_add(c, GP_SEV_OK, d->bdf, "%s is bound to nvidia", name);
		} else if (!strcmp(d->driver, "vfio-pci")) {
			f = gp_doctor_add(c, GP_SEV_WARNING, d->bdf, "%s is owned by vfio-pci (given to a VM?): CUDA on this host "
					  "cannot use it", name);
			gp_finding_fix(f, "if it should serve this host: driverctl unset-override %s (or echo %s > "
				       "/sys/bus/pci/drivers/vfio-pci/unbind; modprobe nvidia); on a VM host: "
				       "gpup2p doctor --skip "
				       "driver.gpu_bound", d->bdf, d->bdf);
		} else if (!d->driver[0] && nv == 0) {
			f = gp_doctor_add(c, GP_SEV_SKIPPED, d->bdf, "%s has no driver: the nvidia module is not loaded (see "
					  "driver.loaded)", name);
		} else if (!d->driver[0]) {
			f = gp_doctor_add(c, GP_SEV_ERROR, d->bdf, "%s has no driver bound", name);
			gp_finding_fix(f, "modprobe nvidia; if the GPU stays unbound, dmesg | grep -i nvrm says why (fallen "
				       "off the bus, excluded, unsupported by this driver)");
		} else {
			f = gp_doctor_add(c, GP_SEV_ERROR, d->bdf, "%s is bound to %s, not nvidia", name, d->driver);
			gp_finding_fix(f, "blacklist %s (/etc/modprobe.d), rebuild the initramfs, reboot; or echo %s > "
				       "/sys/bus/pci/drivers/%s/unbind && modprobe nvidia", d->driver, d->bdf, d->driver);
		}
		gp_finding_bdf(f, d->bdf);
		gp_finding_ev(f, "driver", "%s", d->driver[0] ? d->driver : "none");
	}
}

static void check_nouveau(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	int m, bound;

	if (gp_doctor_no_gpu(c))
		return;
	m = gp_doctor_module(c, "nouveau");
	bound = gpus_bound(c, "nouveau");
	if (m == 1 || bound) {
		f = gp_doctor_add(c, GP_SEV_ERROR, "nouveau", "the nouveau driver is loaded%s", bound ? " and holds GPUs" : "");
		gp_finding_ev(f, m == 1 ? "/proc/modules" : "driver link", "nouveau");
		for (int i = 0; i < c->topo->ngpu; i++)
			if (!strcmp(gp_doctor_dev(c, i)->driver, "nouveau"))
				gp_finding_bdf(f, gp_doctor_dev(c, i)->bdf);
		gp_finding_fix(f, "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' > "
			       "/etc/modprobe.d/blacklist-nouveau.conf; update-initramfs -u (or dracut -f); reboot");
	} else if (m == 0) {
		f = gp_doctor_add(c, GP_SEV_OK, "nouveau", "nouveau is not loaded");
		gp_finding_ev(f, "/proc/modules", "no nouveau");
	} else {
		gp_doctor_missing(c, "nouveau", "/proc/modules", m);
	}
}

static void check_uvm(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	int nv, uvm;

	if (gp_doctor_no_gpu(c))
		return;
	nv = gp_doctor_module(c, "nvidia");
	uvm = gp_doctor_module(c, "nvidia_uvm");
	if (nv < 0) {
		gp_doctor_missing(c, "nvidia_uvm", "/proc/modules", nv);
	} else if (nv == 0) {
		gp_doctor_add(c, GP_SEV_SKIPPED, "nvidia_uvm", "the nvidia module is not loaded (see driver.loaded)");
	} else if (uvm == 1) {
		f = gp_doctor_add(c, GP_SEV_OK, "nvidia_uvm", "nvidia_uvm is loaded");
		gp_finding_ev(f, "/proc/modules", "nvidia_uvm");
	} else {
		f = gp_doctor_add(c, GP_SEV_WARNING, "nvidia_uvm", "nvidia_uvm is not loaded: CUDA loads it on first use only "
				  "when nvidia-modprobe (setuid root) is installed");
		gp_finding_ev(f, "/proc/modules", "no nvidia_uvm");
		gp_finding_fix(f, "modprobe nvidia-uvm; echo nvidia-uvm > /etc/modules-load.d/nvidia-uvm.conf");
	}
}

/* The nvidia module is known not to be loaded: say skipped and return 1. */
static int nvidia_absent(struct gp_doctor_ctx *c, const char *subject)
{
	if (gp_doctor_module(c, "nvidia") != 0)
		return 0;
	gp_doctor_add(c, GP_SEV_SKIPPED, subject, "the nvidia module is not loaded (see driver.loaded)");
	return 1;
}

static void check_flavor(struct gp_doctor_ctx *c)
{
	struct gp_finding *f;
	const char *v;
	int err;

	if (gp_doctor_no_gpu(c))
		return;
	v = gp_doctor_nv_version(c, &err);
	if (!v) {
		if (!nvidia_absent(c, "nvidia"))
			gp_doctor_missing(c, "nvidia", "/proc/driver/nvidia/version", err);
		return;
	}
	switch (gp_doctor_nv_open(v)) {
	case 1:
		f = gp_doctor_add(c, GP_SEV_OK, "nvidia", "open kernel module %s: dma-buf GPUDirect RDMA is possible",
				  gp_doctor_nv_release(c));
		break;
	case 0:
		f = gp_doctor_add(c, GP_SEV_INFO, "nvidia", "proprietary kernel module %s: GPUDirect RDMA through dma-buf "
				  "(no nvidia-peermem) needs the open module", gp_doctor_nv_release(c));
		gp_finding_fix(f, "for dma-buf: install the open flavour (nvidia-open, nvidia-kernel-open-dkms; Turing or "
			       "newer GPUs)");
		break;
	default:
		f = gp_doctor_add(c, GP_SEV_UNKNOWN, "nvidia", "unrecognised driver version line");
		break;
	}
	gp_finding_ev(f, "/proc/driver/nvidia/version", "%s", v);
}

static int has_p2p_key(const char *s)
{
	for (; *s; s++)
		if (!strncasecmp(s, "p2p", 3))
			return 1;
	return 0;
}

static void check_params(struct gp_doctor_ctx *c)
{
	/* a value is at most as long as the params file read (8 KiB): a P2P key at its end is still seen */
	char dw[8192], dwd[8192];
	struct gp_buf msg = GP_BUF_INIT; /* both values quoted: longer than any fixed message */
	char rebar[32];
	struct gp_finding *f;
	enum gp_sev sev = GP_SEV_OK;
	int missing, rc, r2, r3;

	if (gp_doctor_no_gpu(c))
		return;
	rc = gp_doctor_nv_param(c, "RegistryDwords", dw, sizeof(dw), &missing);
	if (missing) {
		if (!nvidia_absent(c, "nvidia"))
			gp_doctor_missing(c, "nvidia", "/proc/driver/nvidia/params", rc);
		return;
	}
	if (rc)
		dw[0] = '\0';
	r2 = gp_doctor_nv_param(c, "RegistryDwordsPerDevice", dwd, sizeof(dwd), &missing);
	if (r2)
		dwd[0] = '\0';
	r3 = gp_doctor_nv_param(c, "EnableResizableBar", rebar, sizeof(rebar), &missing);
	if (has_p2p_key(dw) || has_p2p_key(dwd)) {
		sev = GP_SEV_WARNING;
		gp_buf_addf(&msg, "registry keys force P2P behaviour (RegistryDwords \"%s\"%s%s%s)", dw,
			    dwd[0] ? ", per device \"" : "", dwd, dwd[0] ? "\"" : "");
	} else if (dw[0] || dwd[0]) {
		sev = GP_SEV_INFO;
		gp_buf_addf(&msg, "registry keys set: RegistryDwords \"%s\"%s%s%s", dw, dwd[0] ? ", per device \"" : "",
			    dwd, dwd[0] ? "\"" : "");
	}
	if (!r3 && strcmp(rebar, "0")) {
		if (sev == GP_SEV_OK)
			sev = GP_SEV_INFO;
		gp_buf_addf(&msg, "%sEnableResizableBar=%s: the driver resizes BAR1 itself", msg.len ? "; " : "", rebar);
	}
	if (sev == GP_SEV_OK)
		f = gp_doctor_add(c, GP_SEV_OK, "nvidia", "no registry overrides; EnableResizableBar %s", r3 ? "not listed" : rebar);
	else
		f = gp_doctor_add(c, sev, "nvidia", "%s", gp_buf_str(&msg));
	gp_buf_free(&msg);
	gp_finding_ev(f, "RegistryDwords", "%s", dw);
	if (dwd[0])
		gp_finding_ev(f, "RegistryDwordsPerDevice", "%s", dwd);
	if (!r3)
		gp_finding_ev(f, "EnableResizableBar", "%s", rebar);
	if (sev == GP_SEV_WARNING)
		gp_finding_fix(f, "remove the P2P keys from NVreg_RegistryDwords in /etc/modprobe.d/*.conf (unless your "
			       "vendor asked for them), rebuild the initramfs, reload the driver");
}

/* Minor number of a GPU's /dev/nvidiaN: "Device Minor:" of its /proc/driver/nvidia/gpus/BDF/information,
 * else its rank among the GPUs bound to nvidia (the probe order). */
static int gpu_minor(struct gp_doctor_ctx *c, int i, int rank)
{
	char path[128], buf[2048];
	const char *m;

	snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", gp_doctor_dev(c, i)->bdf);
	if (gp_doctor_read(c, path, buf, sizeof(buf)) > 0 && (m = strstr(buf, "Device Minor:")))
		return atoi(m + 13);
	return rank;
}

static void check_nodes(struct gp_doctor_ctx *c)
{
	struct gp_buf missing = GP_BUF_INIT, unusable = GP_BUF_INIT; /* one node per GPU, however many */
	char path[64];
	int n = 0, rank = 0, usable, rc;
	struct gp_finding *f;

	if (gp_doctor_no_gpu(c) || nvidia_absent(c, "/dev"))
		return;
	for (int i = -2; i < c->topo->ngpu; i++) {
		if (i == -2) {
			snprintf(path, sizeof(path), "/dev/nvidiactl");
		} else if (i == -1) {
			if (gp_doctor_module(c, "nvidia_uvm") != 1)
				continue;
			snprintf(path, sizeof(path), "/dev/nvidia-uvm");
		} else {
			if (strcmp(gp_doctor_dev(c, i)->driver, "nvidia"))
				continue;
			snprintf(path, sizeof(path), "/dev/nvidia%d", gpu_minor(c, i, rank++));
		}
		rc = gp_doctor_devnode(c, path, &usable);
		if (rc < 0) {
			gp_doctor_missing(c, "/dev", "/dev", rc);
			gp_buf_free(&missing);
			gp_buf_free(&unusable);
			return;
		}
		n++;
		if (!rc)
			gp_buf_addf(&missing, "%s%s", missing.len ? ", " : "", path);
		else if (!usable)
			gp_buf_addf(&unusable, "%s%s", unusable.len ? ", " : "", path);
	}
	if (missing.len && gp_root_exists(c->root, "/usr/bin/nvidia-modprobe")) { /* a snapshot records it too */
		f = gp_doctor_add(c, GP_SEV_INFO, "/dev", "missing %s: nvidia-modprobe creates them on first CUDA use",
				  gp_buf_str(&missing));
	} else if (missing.len) {
		f = gp_doctor_add(c, GP_SEV_ERROR, "/dev", "device nodes missing: %s", gp_buf_str(&missing));
		gp_finding_fix(f, "nvidia-modprobe -c 0 -u (one -c per GPU minor), or the driver package's udev rules; "
			       "then restart the CUDA programs");
	} else if (unusable.len) {
		f = gp_doctor_add(c, GP_SEV_WARNING, "/dev", "this user cannot open %s", gp_buf_str(&unusable));
		gp_finding_fix(f, "check NVreg_DeviceFileMode/DeviceFileGID (default 0666) or add the user to the "
			       "group owning the nodes");
	} else {
		f = gp_doctor_add(c, GP_SEV_OK, "/dev", "%d NVIDIA device nodes present%s", n, c->root->live ? " and usable" : "");
	}
	if (missing.len)
		gp_finding_ev(f, "missing", "%s", gp_buf_str(&missing));
	if (unusable.len)
		gp_finding_ev(f, "not usable", "%s", gp_buf_str(&unusable));
	gp_buf_free(&missing);
	gp_buf_free(&unusable);
}

static const struct gp_doctor_check checks[] = {
	{ "driver.loaded", "NVIDIA GPUs present but the nvidia module not loaded", GP_SRC_PROC | GP_SRC_SYSFS, 0,
	  check_loaded,
	  "Reads /proc/modules (or, when it is missing, the GPUs' driver links). Error when NVIDIA GPUs are on the "
	  "PCI bus and the nvidia module is not loaded: nothing of CUDA, P2P or GPUDirect works. Fix: modprobe "
	  "nvidia; dmesg says why it failed." },
	{ "driver.gpu_bound", "an NVIDIA GPU bound to another driver, or to none", GP_SRC_SYSFS, 0, check_gpu_bound,
	  "Reads each GPU's driver link in sysfs. Error when a GPU has no driver or another one (nouveau); warning "
	  "when vfio-pci owns it (passed to a VM: this host cannot use it). Names the GPU and how to rebind it." },
	{ "driver.nouveau", "the nouveau driver loaded", GP_SRC_PROC | GP_SRC_SYSFS, 0, check_nouveau,
	  "Reads /proc/modules and the GPUs' driver links. Error when nouveau is loaded: it competes with nvidia for "
	  "the GPUs. Fix: blacklist it, rebuild the initramfs, reboot." },
	{ "driver.uvm", "nvidia_uvm not loaded", GP_SRC_PROC, 0, check_uvm,
	  "Reads /proc/modules. Warning when nvidia is loaded but nvidia_uvm is not: CUDA loads it on first use only "
	  "through the setuid nvidia-modprobe. Fix: modprobe nvidia-uvm at boot (modules-load.d)." },
	{ "driver.flavor", "open or proprietary kernel module", GP_SRC_PROC, 0, check_flavor,
	  "Reads /proc/driver/nvidia/version. OK for the open kernel module; info for the proprietary one, since "
	  "GPUDirect RDMA through dma-buf (without nvidia-peermem) needs the open module." },
	{ "driver.params", "module parameters forcing P2P modes or Resizable BAR", GP_SRC_PROC, 0, check_params,
	  "Reads /proc/driver/nvidia/params. Warning when RegistryDwords (or RegistryDwordsPerDevice) holds a P2P key "
	  "(e.g. RMForceP2PType): P2P behaviour is forced rather than chosen by the driver. Info for other registry "
	  "keys and for EnableResizableBar=1. Shows the values." },
	{ "driver.device_nodes", "/dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidiaN missing or unusable", GP_SRC_DEV | GP_SRC_PROC,
	  0, check_nodes,
	  "Looks for /dev/nvidiactl, /dev/nvidia-uvm (when nvidia_uvm is loaded) and /dev/nvidiaN for each GPU (N from "
	  "/proc/driver/nvidia/gpus/BDF/information). Error when one is missing (info when nvidia-modprobe will "
	  "create it), warning when this user cannot open it. Offline it uses the nodes a snapshot recorded." },
	{ "driver.cuda_init", "cuInit fails (no device, driver mismatch)", GP_SRC_CUDA, 0, gp_doctor_check_cuda_init,
	  "Loads libcuda and calls cuInit, cuDriverGetVersion and cuDeviceGetCount (no context: cheap). Error when "
	  "cuInit fails or finds no device, with the CUDA error decoded (CUDA_VISIBLE_DEVICES hiding every GPU, "
	  "libcuda and the kernel module from different drivers). Unknown when libcuda cannot be loaded; live only. "
	  "cuInit runs on a thread from the start of the run; gpup2p doctor --no-cuda skips it." },
	{ "driver.version", "kernel module and user-space driver versions, and what they support", GP_SRC_PROC | GP_SRC_NVML,
	  0, gp_doctor_check_version,
	  "Compares the kernel module's version (/proc/driver/nvidia/version) with NVML's. Error when they differ "
	  "(after an upgrade without reboot: CUDA and NVML fail with a version mismatch). Info for a driver before "
	  "R470 (no nvidia-peermem, no dma-buf export); driver.cuda_init shows the CUDA driver API version. With "
	  "gpup2p doctor --active it also probes whether the CPU can mmap a dma-buf of GPU memory (a context, "
	  "64 KiB exported)." },
	{ "driver.persistence", "persistence mode off", GP_SRC_NVML, 0, gp_doctor_check_persistence,
	  "Reads each GPU's persistence mode (NVML). Warning when off: the driver tears the GPU down when its last "
	  "client exits, so each job's first CUDA call pays seconds of initialisation. Fix: nvidia-persistenced." },
	{ "driver.fabric", "NVSwitch fabric registration not completed", GP_SRC_NVML, 0, gp_doctor_check_fabric,
	  "Reads each GPU's NVSwitch fabric state (NVML). Error when registration has not started (nvidia-fabricmanager "
	  "not running) or completed with an error; warning while in progress. Skipped on GPUs without NVSwitch." },
};

GP_DOCTOR_FAMILY(gp_doctor_fam_driver, "driver", "the NVIDIA kernel driver", checks);
