/* Unit tests: doctor. Every check in the registry must have a fixture (or a set-up on one) where it
 * fires and one where it stays quiet; the registry walk at the end fails an id that lacks either.
 * Fixtures: the specs in tests/fixtures/doctor/ (healthy.spec plus one planted fault each) and the shared
 * specs; the expectations below were worked out from the spec lines, not copied from output. The case
 * set-ups: doctor_setups.h; the healthy fixtures, quiet throughout: test_doctor_healthy. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "doctor/check.h"
#include "doctor_fx.h"
#include "doctor_setups.h"
#include "expect_fx.h"

enum want { FIRE, QUIET };

struct dcase {
	const char *fixture;               /* under $GPUP2P_FIXTURES */
	void (*setup)(struct fx *x, struct gp_doctor_ctx *c);
	const char *id;
	enum want kind;
	enum gp_sev sev;                   /* FIRE: a finding of this severity ... */
	const char *subject;               /* ... on this subject (NULL: any) */
};

static const struct dcase cases[] = {
	/* driver */
	{ D("drv-unloaded"), NULL, "driver.loaded", FIRE, GP_SEV_ERROR, "nvidia" },
	{ D("healthy"), NULL, "driver.loaded", QUIET, 0, NULL },
	{ "h200x2", NULL, "driver.loaded", QUIET, 0, NULL },           /* no /proc/modules: GPUs bound to nvidia */
	{ D("drv-nouveau"), NULL, "driver.gpu_bound", FIRE, GP_SEV_ERROR, "0000:13:00.0" },
	{ D("vfio"), NULL, "driver.gpu_bound", FIRE, GP_SEV_WARNING, "0000:14:00.0" },
	{ D("drv-unloaded"), NULL, "driver.gpu_bound", FIRE, GP_SEV_SKIPPED, "0000:13:00.0" },
	{ D("healthy"), NULL, "driver.gpu_bound", QUIET, 0, NULL },
	{ D("drv-nouveau"), NULL, "driver.nouveau", FIRE, GP_SEV_ERROR, "nouveau" },
	{ D("drv-nouveau-idle"), NULL, "driver.nouveau", FIRE, GP_SEV_ERROR, "nouveau" },
	{ D("healthy"), NULL, "driver.nouveau", QUIET, 0, NULL },
	{ "h200x2", NULL, "driver.nouveau", FIRE, GP_SEV_SKIPPED, NULL }, /* offline, /proc/modules not there */
	{ "h200x2", live, "driver.nouveau", FIRE, GP_SEV_UNKNOWN, NULL }, /* live, /proc/modules unreadable */
	{ D("drv-no-uvm"), NULL, "driver.uvm", FIRE, GP_SEV_WARNING, "nvidia_uvm" },
	{ D("healthy"), NULL, "driver.uvm", QUIET, 0, NULL },
	{ D("drv-unloaded"), NULL, "driver.uvm", FIRE, GP_SEV_SKIPPED, NULL },
	{ D("drv-proprietary"), NULL, "driver.flavor", FIRE, GP_SEV_INFO, "nvidia" },
	{ D("healthy"), NULL, "driver.flavor", QUIET, 0, NULL },
	{ D("drv-unloaded"), NULL, "driver.flavor", FIRE, GP_SEV_SKIPPED, NULL },
	{ D("drv-params"), NULL, "driver.params", FIRE, GP_SEV_WARNING, "nvidia" },
	{ D("drv-params-rebar"), NULL, "driver.params", FIRE, GP_SEV_INFO, "nvidia" },
	{ D("healthy"), NULL, "driver.params", QUIET, 0, NULL },
	{ "h200x2", NULL, "driver.params", FIRE, GP_SEV_SKIPPED, NULL },
	{ D("drv-nodes"), NULL, "driver.device_nodes", FIRE, GP_SEV_ERROR, "/dev" },
	{ D("healthy"), NULL, "driver.device_nodes", QUIET, 0, NULL },
	{ D("drv-no-uvm"), NULL, "driver.device_nodes", QUIET, 0, NULL },  /* no uvm: its node is not needed */
	{ "h200x2", NULL, "driver.device_nodes", FIRE, GP_SEV_SKIPPED, NULL },
	{ D("healthy"), cuda_nodev, "driver.cuda_init", FIRE, GP_SEV_ERROR, "libcuda" },    /* CUDA_ERROR_NO_DEVICE */
	{ D("healthy"), cuda_missing, "driver.cuda_init", FIRE, GP_SEV_UNKNOWN, "libcuda" },
	{ D("healthy"), cuda_ok, "driver.cuda_init", QUIET, 0, NULL },
	{ D("healthy"), NULL, "driver.cuda_init", FIRE, GP_SEV_SKIPPED, NULL },             /* offline */
	{ D("drv-mismatch"), NULL, "driver.version", FIRE, GP_SEV_ERROR, "nvidia" },
	{ D("drv-old"), NULL, "driver.version", FIRE, GP_SEV_INFO, "nvidia" },
	{ D("healthy"), NULL, "driver.version", QUIET, 0, NULL },
	{ "h200x2", NULL, "driver.version", QUIET, 0, NULL },          /* from the NVML facts: 580.159.04 */
	{ D("drv-persistence"), NULL, "driver.persistence", FIRE, GP_SEV_WARNING, "0000:93:00.0" },
	{ D("healthy"), NULL, "driver.persistence", QUIET, 0, NULL },
	{ "h200x2", NULL, "driver.persistence", QUIET, 0, NULL },      /* nvidia-smi -q: Enabled */
	{ "seed4x2", NULL, "driver.persistence", FIRE, GP_SEV_SKIPPED, NULL }, /* no NVML facts recorded */
	{ "seed4x2", live, "driver.persistence", FIRE, GP_SEV_UNKNOWN, NULL }, /* ... live: NVML absent */
	{ D("drv-mismatch"), NULL, "driver.persistence", FIRE, GP_SEV_UNKNOWN, "system" }, /* recorded: unavailable */
	{ D("drv-fabric"), NULL, "driver.fabric", FIRE, GP_SEV_ERROR, "0000:13:00.0" },   /* not started */
	{ D("drv-fabric"), NULL, "driver.fabric", FIRE, GP_SEV_WARNING, "0000:14:00.0" }, /* in progress */
	{ D("healthy"), NULL, "driver.fabric", QUIET, 0, NULL },
	{ "h200x2", NULL, "driver.fabric", QUIET, 0, NULL },          /* nvidia-smi -q: Completed, Success */
	/* gpu */
	{ D("gpu-visible"), NULL, "gpu.visible", FIRE, GP_SEV_ERROR, "0000:94:00.0" },
	{ D("gpu-excluded"), NULL, "gpu.visible", FIRE, GP_SEV_SKIPPED, "0000:94:00.0" }, /* excluded, not lost */
	{ D("healthy"), NULL, "gpu.visible", QUIET, 0, NULL },
	{ "h200x2", NULL, "gpu.visible", QUIET, 0, NULL },
	{ D("gpu-excluded"), NULL, "gpu.excluded", FIRE, GP_SEV_WARNING, "0000:94:00.0" },
	{ D("gpu-excluded"), NULL, "driver.persistence", FIRE, GP_SEV_SKIPPED, "0000:94:00.0" },
	{ D("healthy"), NULL, "gpu.excluded", QUIET, 0, NULL },
	{ "h200x2", NULL, "gpu.excluded", FIRE, GP_SEV_SKIPPED, NULL }, /* /proc/driver/nvidia/gpus not captured */
	{ D("gpu-ecc"), NULL, "gpu.ecc", FIRE, GP_SEV_ERROR, "0000:13:00.0" },   /* remapping failed */
	{ D("gpu-ecc"), NULL, "gpu.ecc", FIRE, GP_SEV_ERROR, "0000:14:00.0" },   /* remapping pending: reset */
	{ D("healthy"), NULL, "gpu.ecc", QUIET, 0, NULL },
	{ D("gpu-mig"), NULL, "gpu.mig", FIRE, GP_SEV_INFO, "0000:33:00.0" },
	{ D("healthy"), NULL, "gpu.mig", QUIET, 0, NULL },
	{ "h200x2", NULL, "gpu.mig", QUIET, 0, NULL },
	{ D("gpu-virt"), NULL, "gpu.virtualization", FIRE, GP_SEV_INFO, "0000:13:00.0" },
	{ D("healthy"), NULL, "gpu.virtualization", QUIET, 0, NULL },
	{ "h200x2", NULL, "gpu.virtualization", QUIET, 0, NULL },     /* pass-through, NVLink-joined, no NIC */
	{ D("gpu-compute"), NULL, "gpu.compute_mode", FIRE, GP_SEV_WARNING, "0000:13:00.0" }, /* Prohibited */
	{ D("gpu-compute"), NULL, "gpu.compute_mode", FIRE, GP_SEV_INFO, "0000:14:00.0" },    /* Exclusive_Process */
	{ D("healthy"), NULL, "gpu.compute_mode", QUIET, 0, NULL },
	{ D("gpu-xid"), kmsg_on, "gpu.xid", FIRE, GP_SEV_ERROR, "0000:13:00.0" },   /* 79 (and 13 x2) */
	{ D("gpu-xid"), kmsg_on, "gpu.xid", FIRE, GP_SEV_WARNING, "0000:14:00.0" }, /* 31, 13, 94 */
	{ D("gpu-xid"), kmsg_on, "gpu.xid", FIRE, GP_SEV_INFO, "0000:93:00.0" },    /* 63 (IGNORE), dmesg format */
	{ D("gpu-xid"), kmsg_on, "gpu.xid", FIRE, GP_SEV_ERROR, "0000:e1:00.0" },   /* 79, not on the bus */
	{ D("gpu-xid"), kmsg_on, "gpu.xid", FIRE, GP_SEV_OK, "0000:33:00.0" },      /* malformed lines only */
	{ D("gpu-xid"), NULL, "gpu.xid", FIRE, GP_SEV_SKIPPED, "system" },          /* not requested */
	{ D("healthy"), kmsg_on, "gpu.xid", QUIET, 0, NULL },
	{ "h200x2", kmsg_on, "gpu.xid", FIRE, GP_SEV_SKIPPED, "system" },           /* no kernel log in the root */
	{ D("gpu-sxid"), kmsg_on, "nvlink.sxid", FIRE, GP_SEV_ERROR, "0000:c2:00.0" },  /* fatal (test_doctor_xid) */
	{ D("gpu-sxid-clean"), kmsg_on, "nvlink.sxid", QUIET, 0, NULL },
	{ D("gpu-throttle"), NULL, "gpu.throttle", FIRE, GP_SEV_WARNING, "0000:13:00.0" }, /* HW thermal */
	{ D("gpu-throttle-idle"), NULL, "gpu.throttle", QUIET, 0, NULL },
	/* bar */
	{ D("bar-small"), NULL, "bar.small", FIRE, GP_SEV_ERROR, "0000:13:00.0" },   /* NICs on its switch */
	{ "workstation", NULL, "bar.small", FIRE, GP_SEV_INFO, "0000:03:00.0" },    /* no NIC: nothing needs it */
	{ "nonroot", NULL, "bar.small", FIRE, GP_SEV_INFO, "0000:03:00.0" },        /* 256M window, no need */
	{ "seed4x2", NULL, "bar.small", FIRE, GP_SEV_SKIPPED, "0000:01:00.0" },     /* no facts, 32G aperture */
	{ "seed4x2", live, "bar.small", FIRE, GP_SEV_UNKNOWN, "0000:01:00.0" },     /* ... live: NVML absent */
	{ D("healthy"), NULL, "bar.small", QUIET, 0, NULL },
	{ "h200x2", NULL, "bar.small", QUIET, 0, NULL },
	{ D("bar-unassigned"), NULL, "bar.unassigned", FIRE, GP_SEV_ERROR, "0000:15:00.0" },
	{ D("healthy"), NULL, "bar.unassigned", QUIET, 0, NULL },
	{ D("bar-small"), NULL, "bar.rebar", FIRE, GP_SEV_WARNING, "0000:13:00.0" },
	{ "workstation", NULL, "bar.rebar", FIRE, GP_SEV_WARNING, "0000:04:00.0" },
	{ D("healthy"), NULL, "bar.rebar", FIRE, GP_SEV_OK, "0000:13:00.0" },       /* at its largest size */
	{ D("iommu-pt"), NULL, "bar.rebar", FIRE, GP_SEV_SKIPPED, "0000:14:00.0" }, /* no capability */
	{ "nonroot", NULL, "bar.rebar", FIRE, GP_SEV_SKIPPED, "0000:03:00.0" },     /* 64-byte config, offline */
	{ "nonroot", live, "bar.rebar", FIRE, GP_SEV_UNKNOWN, "0000:03:00.0" },     /* ... live: run as root */
	{ D("healthy"), NULL, "bar.rebar", QUIET, 0, NULL },
	{ D("healthy"), bar1_full, "bar.bar1_used", FIRE, GP_SEV_WARNING, "0000:13:00.0" }, /* 90.1% */
	{ D("healthy"), bar1_full, "bar.bar1_used", FIRE, GP_SEV_OK, "0000:14:00.0" },      /* 90%: not above */
	{ D("healthy"), bar1_ok, "bar.bar1_used", QUIET, 0, NULL },
	{ D("healthy"), NULL, "bar.bar1_used", FIRE, GP_SEV_SKIPPED, "system" },      /* offline: live only */
	{ D("healthy"), live, "bar.bar1_used", FIRE, GP_SEV_UNKNOWN, "0000:13:00.0" }, /* NVML did not say */
	/* iommu */
	{ D("iommu-dma"), NULL, "iommu.mode", FIRE, GP_SEV_WARNING, "system" },
	{ "workstation", NULL, "iommu.mode", FIRE, GP_SEV_WARNING, "system" },
	{ D("iommu-pt"), NULL, "iommu.mode", QUIET, 0, NULL },
	{ D("healthy"), NULL, "iommu.mode", QUIET, 0, NULL },
	{ D("iommu-cmdline"), NULL, "iommu.cmdline", FIRE, GP_SEV_WARNING, "system" },
	{ D("iommu-pt"), NULL, "iommu.cmdline", QUIET, 0, NULL },
	{ "workstation", NULL, "iommu.cmdline", QUIET, 0, NULL },
	{ D("iommu-shared"), NULL, "iommu.group_shared", FIRE, GP_SEV_INFO, "0000:13:00.0" },
	{ D("iommu-pt"), NULL, "iommu.group_shared", QUIET, 0, NULL },
	{ D("healthy"), NULL, "iommu.group_shared", FIRE, GP_SEV_SKIPPED, NULL },    /* no IOMMU groups */
	{ D("vfio"), NULL, "iommu.vfio", FIRE, GP_SEV_INFO, "0000:14:00.0" },
	{ D("healthy"), NULL, "iommu.vfio", QUIET, 0, NULL },
	/* acs */
	{ D("acs-redirect"), NULL, "acs.redirect", FIRE, GP_SEV_ERROR, "0000:12:01.0" }, /* GPU0-GPU1 PIX, no NVLink */
	{ "workstation", NULL, "acs.redirect", FIRE, GP_SEV_ERROR, "0000:02:08.0" },     /* GPU0-GPU1 PIX (PLX) */
	{ "seed4x2", NULL, "acs.redirect", FIRE, GP_SEV_ERROR, "0000:85:04.0" },         /* GPU2-GPU3 PIX */
	{ "seed4x2", NULL, "acs.redirect", FIRE, GP_SEV_ERROR, "0000:82:08.0" },         /* GPU1-GPU2/GPU3 PXB */
	{ "seed4x2", NULL, "acs.redirect", FIRE, GP_SEV_INFO, "0000:80:01.0" },          /* root port: SYS pairs only */
	{ D("acs-rootport"), NULL, "acs.redirect", FIRE, GP_SEV_INFO, "0000:10:01.0" },  /* NODE/SYS/NV18: not an error */
	{ D("healthy"), NULL, "acs.redirect", QUIET, 0, NULL },
	{ "epyc6", NULL, "acs.redirect", QUIET, 0, NULL },                               /* root ports at 0 */
	{ "h200x2", NULL, "acs.redirect", QUIET, 0, NULL },                              /* no ACS capability */
	{ D("acs-egress"), NULL, "acs.redirect", QUIET, 0, NULL },                       /* EgressCtrl alone */
	{ "nonroot", NULL, "acs.redirect", FIRE, GP_SEV_SKIPPED, "system" },             /* 64-byte config */
	{ "nonroot", live, "acs.redirect", FIRE, GP_SEV_UNKNOWN, "system" },
	{ D("acs-egress"), NULL, "acs.egress", FIRE, GP_SEV_WARNING, "0000:12:00.0" },
	{ D("healthy"), NULL, "acs.egress", QUIET, 0, NULL },
	{ D("acs-redirect"), NULL, "acs.egress", QUIET, 0, NULL },                       /* redirect bits, no EC */
	{ D("acs-boot"), NULL, "acs.boot", FIRE, GP_SEV_WARNING, "gpup2p-acs.service" },  /* IOMMU, cleared, no unit */
	{ D("iommu-dma"), NULL, "acs.boot", FIRE, GP_SEV_WARNING, "gpup2p-acs.service" },
	{ D("acs-boot-unit"), NULL, "acs.boot", QUIET, 0, NULL },                        /* the unit enabled */
	{ D("acs-boot-param"), NULL, "acs.boot", QUIET, 0, NULL },                       /* pci=disable_acs_redir= */
	{ D("acs-boot-rclocal"), NULL, "acs.boot", QUIET, 0, NULL },                     /* /etc/rc.local */
	{ D("iommu-pt"), NULL, "acs.boot", QUIET, 0, NULL },
	{ D("healthy"), NULL, "acs.boot", QUIET, 0, NULL },                              /* cleared, but no IOMMU */
	{ "workstation", NULL, "acs.boot", QUIET, 0, NULL },                             /* IOMMU, ACS set: as it stays */
	{ D("acs-unreadable"), NULL, "acs.unreadable", FIRE, GP_SEV_UNKNOWN, "0000:12:00.0" },
	{ "nonroot", NULL, "acs.unreadable", FIRE, GP_SEV_UNKNOWN, "0000:02:08.0" },
	{ D("acs-unreadable"), NULL, "acs.redirect", FIRE, GP_SEV_SKIPPED, "system" },   /* see acs.unreadable */
	{ D("healthy"), NULL, "acs.unreadable", QUIET, 0, NULL },
	{ "h200x2", NULL, "acs.unreadable", QUIET, 0, NULL },
	/* pcie */
	{ D("pcie-width"), NULL, "pcie.link_width", FIRE, GP_SEV_WARNING, "0000:14:00.0" },
	{ D("healthy"), NULL, "pcie.link_width", QUIET, 0, NULL },
	{ "h200x2", NULL, "pcie.link_width", QUIET, 0, NULL },
	{ D("pcie-slot"), NULL, "pcie.link_width", QUIET, 0, NULL },    /* x16 GPU in an x8 slot: trained x8 */
	{ "sriov", NULL, "pcie.link_width", QUIET, 0, NULL },         /* VFs: their PF's link, not unknown */
	{ "sriov", NULL, "pcie.link_speed", QUIET, 0, NULL },
	{ D("pcie-width-vf"), NULL, "pcie.link_width", FIRE, GP_SEV_WARNING, "0000:04:00.0" }, /* NIC0+6VFs x8 */
	{ D("pcie-speed-nic"), NULL, "pcie.link_speed", FIRE, GP_SEV_WARNING, "0000:15:00.0" },  /* NIC */
	{ D("pcie-speed-nic"), NULL, "pcie.link_speed", FIRE, GP_SEV_WARNING, "0000:91:00.0" },  /* switch */
	{ D("pcie-gpu-idle"), NULL, "pcie.link_speed", FIRE, GP_SEV_INFO, "0000:13:00.0" },      /* idle GPU */
	{ D("healthy"), NULL, "pcie.link_speed", QUIET, 0, NULL },
	{ "h200x2", NULL, "pcie.link_speed", QUIET, 0, NULL },
	{ D("pcie-slot"), NULL, "pcie.link_speed", QUIET, 0, NULL },    /* Gen5 GPU in a Gen4 slot */
	{ D("pcie-aer"), NULL, "pcie.aer", FIRE, GP_SEV_ERROR, "0000:13:00.0" },   /* fatal */
	{ D("pcie-aer"), NULL, "pcie.aer", FIRE, GP_SEV_WARNING, "0000:15:00.0" }, /* non-fatal */
	{ D("pcie-aer"), NULL, "pcie.aer", FIRE, GP_SEV_WARNING, "0000:92:00.0" }, /* 250 correctable */
	{ D("pcie-aer"), NULL, "pcie.aer", FIRE, GP_SEV_OK, "0000:94:00.0" },      /* 3 correctable */
	{ D("healthy"), NULL, "pcie.aer", QUIET, 0, NULL },
	{ "h200x2", NULL, "pcie.aer", FIRE, GP_SEV_SKIPPED, "system" },            /* not captured */
	{ D("pcie-mps"), NULL, "pcie.mps", FIRE, GP_SEV_INFO, "0000:13:00.0" },
	{ D("pcie-mps"), NULL, "pcie.mps", FIRE, GP_SEV_INFO, "0000:14:00.0" },
	{ D("healthy"), NULL, "pcie.mps", QUIET, 0, NULL },
	{ "h200x2", NULL, "pcie.mps", FIRE, GP_SEV_SKIPPED, "system" },            /* no NIC */
	{ D("pcie-ro"), NULL, "pcie.relaxed_ordering", FIRE, GP_SEV_INFO, "0000:36:00.0" },
	{ D("healthy"), NULL, "pcie.relaxed_ordering", QUIET, 0, NULL },
	{ D("pcie-replay"), NULL, "pcie.replay", FIRE, GP_SEV_WARNING, "0000:13:00.0" }, /* rising */
	{ D("pcie-replay"), NULL, "pcie.replay", FIRE, GP_SEV_OK, "0000:14:00.0" },      /* steady: no alarm */
	{ D("healthy"), NULL, "pcie.replay", QUIET, 0, NULL },
	{ "h200x2", NULL, "pcie.replay", FIRE, GP_SEV_SKIPPED, "0000:00:06.0" },         /* not recorded */
	/* topo */
	{ D("topo-nic"), NULL, "topo.nic_distance", FIRE, GP_SEV_WARNING, "0000:33:00.0" },
	{ "seed4x2", NULL, "topo.nic_distance", FIRE, GP_SEV_INFO, "0000:01:00.0" },     /* no GPU has one near */
	{ D("healthy"), NULL, "topo.nic_distance", QUIET, 0, NULL },
	{ "h200x2", NULL, "topo.nic_distance", FIRE, GP_SEV_SKIPPED, NULL },             /* no NIC */
	{ D("topo-sys"), NULL, "topo.sys_pairs", FIRE, GP_SEV_INFO, "system" },
	{ "seed4x2", NULL, "topo.sys_pairs", FIRE, GP_SEV_SKIPPED, "system" },           /* NVLink not recorded */
	{ D("healthy"), NULL, "topo.sys_pairs", QUIET, 0, NULL },                          /* SYS pairs, NVLinked */
	{ "h200x2", NULL, "topo.sys_pairs", QUIET, 0, NULL },
	/* nvlink */
	{ D("nvlink-down"), NULL, "nvlink.down", FIRE, GP_SEV_ERROR, "0000:34:00.0" },
	{ D("healthy"), NULL, "nvlink.down", QUIET, 0, NULL },
	{ D("nvlink-errors"), NULL, "nvlink.errors", FIRE, GP_SEV_WARNING, "0000:b3:00.0" }, /* rising */
	{ D("nvlink-errors"), NULL, "nvlink.errors", FIRE, GP_SEV_OK, "0000:b4:00.0" },      /* steady: no alarm */
	{ D("healthy"), NULL, "nvlink.errors", QUIET, 0, NULL },
	/* numa */
	{ D("numa-unknown"), NULL, "numa.unknown", FIRE, GP_SEV_WARNING, "0000:93:00.0" },
	{ D("healthy"), NULL, "numa.unknown", QUIET, 0, NULL },
	{ "h200x2", NULL, "numa.unknown", QUIET, 0, NULL },                         /* one node */
	{ D("numa-balancing"), NULL, "numa.balancing", FIRE, GP_SEV_INFO, "kernel.numa_balancing" },
	{ D("healthy"), NULL, "numa.balancing", QUIET, 0, NULL },
	/* p2p: live only (libcuda, NVML), through their test doubles */
	{ D("p2p-pcie"), p2p_yes, "p2p.access", QUIET, 0, NULL },
	{ D("p2p-many"), p2p_yes, "p2p.access", FIRE, GP_SEV_UNKNOWN, "system" },   /* 65 GPUs: the cut said */
	{ D("p2p-acs"), p2p_no_pix, "p2p.access", FIRE, GP_SEV_WARNING, "0000:86:00.0-0000:87:00.0" }, /* PIX */
	{ D("p2p-pcie"), p2p_no, "p2p.access", FIRE, GP_SEV_WARNING, "0000:83:00.0-0000:86:00.0" },   /* PXB */
	{ D("p2p-pcie"), p2p_no, "p2p.access", FIRE, GP_SEV_INFO, "0000:01:00.0-0000:83:00.0" },      /* SYS */
	{ D("iommu-dma"), p2p_no, "p2p.access", FIRE, GP_SEV_WARNING, "0000:13:00.0-0000:14:00.0" }, /* NV18 */
	{ D("p2p-geforce"), p2p_no, "p2p.access", FIRE, GP_SEV_INFO, "0000:03:00.0-0000:04:00.0" },
	{ D("p2p-geforce"), p2p_yes, "p2p.access", FIRE, GP_SEV_WARNING, "0000:03:00.0-0000:04:00.0" }, /* 256M, DMA-FQ */
	{ D("p2p-pcie"), NULL, "p2p.access", FIRE, GP_SEV_SKIPPED, "system" },                        /* offline */
	{ "nicorder", p2p_yes, "p2p.access", FIRE, GP_SEV_SKIPPED, "system" },                        /* one GPU */
	{ D("p2p-pcie"), p2p_yes, "p2p.nvml_status", QUIET, 0, NULL },
	{ D("p2p-pcie"), p2p_none, "p2p.nvml_status", QUIET, 0, NULL },     /* both refuse: they agree */
	{ D("p2p-pcie"), p2p_nvml_no, "p2p.nvml_status", FIRE, GP_SEV_WARNING, "0000:86:00.0-0000:87:00.0" },
	{ D("p2p-acs"), p2p_no_pix, "p2p.nvml_status", FIRE, GP_SEV_WARNING, "0000:86:00.0-0000:87:00.0" },
	{ D("healthy"), p2p_yes_nvl, "p2p.nvml_status", QUIET, 0, NULL },
	{ D("healthy"), p2p_yes, "p2p.nvml_status", FIRE, GP_SEV_WARNING, "0000:13:00.0-0000:14:00.0" }, /* NVLink */
	{ D("p2p-pcie"), NULL, "p2p.nvml_status", FIRE, GP_SEV_SKIPPED, "system" },
	{ "workstation", active, "p2p.verify", QUIET, 0, NULL },
	{ "nicorder", active, "p2p.verify", QUIET, 0, NULL },                   /* one GPU: host<->GPU */
	{ "workstation", corrupt_peer, "p2p.verify", FIRE, GP_SEV_ERROR, "0000:03:00.0-0000:04:00.0" },
	{ "workstation", corrupt_h2d, "p2p.verify", FIRE, GP_SEV_ERROR, "0000:03:00.0" },
	{ "workstation", p2p_yes, "p2p.verify", FIRE, GP_SEV_SKIPPED, "system" },  /* --active not given */
	{ "workstation", active, "p2p.bandwidth", QUIET, 0, NULL },
	{ "workstation", slow_peer, "p2p.bandwidth", FIRE, GP_SEV_WARNING, "0000:03:00.0-0000:04:00.0" },
	{ "workstation", p2p_yes, "p2p.bandwidth", FIRE, GP_SEV_SKIPPED, "system" },
	/* peermem */
	{ D("pm-missing"), NULL, "peermem.missing", FIRE, GP_SEV_WARNING, "nvidia_peermem" },
	{ D("pm-dmabuf"), NULL, "peermem.missing", FIRE, GP_SEV_UNKNOWN, "nvidia_peermem" }, /* offline: not probed */
	{ D("pm-dmabuf"), verbs_all, "peermem.missing", QUIET, 0, NULL },          /* dma-buf: every part there */
	{ D("pm-dmabuf"), dmabuf_cuda_no, "peermem.missing", FIRE, GP_SEV_WARNING, "nvidia_peermem" },
	{ D("pm-dmabuf"), dmabuf_old_verbs, "peermem.missing", FIRE, GP_SEV_WARNING, "nvidia_peermem" },
	{ D("pm-dmabuf"), dmabuf_no_cuda, "peermem.missing", FIRE, GP_SEV_UNKNOWN, "nvidia_peermem" },
	{ D("pm-dmabuf"), verbs_missing, "peermem.missing", FIRE, GP_SEV_UNKNOWN, "nvidia_peermem" },
	{ D("pm-dmabuf-kernel"), NULL, "peermem.missing", FIRE, GP_SEV_WARNING, "nvidia_peermem" }, /* 5.10 */
	{ D("pm-dmabuf-r510"), NULL, "peermem.missing", FIRE, GP_SEV_WARNING, "nvidia_peermem" },
	{ D("healthy"), dmabuf_cuda_no, "peermem.missing", QUIET, 0, NULL },        /* nvidia_peermem loaded */
	{ D("healthy"), NULL, "peermem.missing", QUIET, 0, NULL },
	{ D("pm-legacy"), NULL, "peermem.missing", QUIET, 0, NULL },
	{ D("drv-unloaded"), NULL, "peermem.missing", FIRE, GP_SEV_SKIPPED, NULL },
	{ "workstation", NULL, "peermem.missing", FIRE, GP_SEV_SKIPPED, NULL },     /* no RDMA NIC */
	{ D("pm-rxe"), NULL, "peermem.missing", FIRE, GP_SEV_SKIPPED, "nvidia_peermem" }, /* rxe only */
	{ D("pm-conflict"), NULL, "peermem.conflict", FIRE, GP_SEV_ERROR, "nvidia_peermem" },
	{ D("healthy"), NULL, "peermem.conflict", QUIET, 0, NULL },
	{ D("pm-legacy"), NULL, "peermem.legacy", FIRE, GP_SEV_WARNING, "nv_peer_mem" },
	{ D("healthy"), NULL, "peermem.legacy", QUIET, 0, NULL },
	{ D("pm-conflict"), NULL, "peermem.legacy", QUIET, 0, NULL },                /* not alone: conflict's job */
	{ D("pm-missing"), NULL, "peermem.dmabuf", FIRE, GP_SEV_INFO, "dma-buf" },      /* proprietary module */
	{ D("pm-oldkernel"), NULL, "peermem.dmabuf", FIRE, GP_SEV_INFO, "dma-buf" },    /* kernel 5.10 */
	{ D("healthy"), NULL, "peermem.dmabuf", FIRE, GP_SEV_SKIPPED, "dma-buf" },    /* offline: live parts not probed */
	{ D("pm-dmabuf"), NULL, "peermem.dmabuf", FIRE, GP_SEV_SKIPPED, "dma-buf" },
	{ D("healthy"), dmabuf_no_cuda, "peermem.dmabuf", FIRE, GP_SEV_UNKNOWN, "dma-buf" },
	{ D("pm-dmabuf-r510"), NULL, "peermem.dmabuf", FIRE, GP_SEV_INFO, "dma-buf" },
	{ D("healthy"), verbs_all, "peermem.dmabuf", QUIET, 0, NULL },                /* live: CUDA and verbs say yes */
	{ D("healthy"), dmabuf_cuda_no, "peermem.dmabuf", FIRE, GP_SEV_INFO, "dma-buf" },
	{ D("healthy"), dmabuf_old_verbs, "peermem.dmabuf", FIRE, GP_SEV_INFO, "dma-buf" },
	{ "workstation", NULL, "peermem.dmabuf", FIRE, GP_SEV_SKIPPED, NULL },       /* no RDMA NIC: never an alarm */
	{ D("pm-rxe"), NULL, "peermem.dmabuf", FIRE, GP_SEV_SKIPPED, "dma-buf" },      /* rxe only */
	/* rdma */
	{ D("rdma-port"), NULL, "rdma.port", FIRE, GP_SEV_ERROR, "mlx5_0/1" },          /* near GPU0/GPU1 */
	{ D("rdma-port-far"), NULL, "rdma.port", FIRE, GP_SEV_INFO, "mlx5_8/1" },      /* no GPU near: not an error */
	{ D("healthy"), NULL, "rdma.port", QUIET, 0, NULL },
	{ D("rdma-far"), NULL, "rdma.port", QUIET, 0, NULL },
	{ "workstation", NULL, "rdma.port", FIRE, GP_SEV_SKIPPED, NULL },
	{ D("rdma-errors"), NULL, "rdma.errors", FIRE, GP_SEV_WARNING, "mlx5_0/1" },   /* test_doctor_judge: more */
	{ D("healthy"), NULL, "rdma.errors", QUIET, 0, NULL },
	{ D("rdma-flaps"), NULL, "rdma.flaps", FIRE, GP_SEV_WARNING, "mlx5_0/1" },
	{ D("healthy"), NULL, "rdma.flaps", QUIET, 0, NULL },
	{ D("gf-proprietary"), NULL, "p2p.geforce", FIRE, GP_SEV_INFO, "nvidia" },
	{ D("gf-ready"), NULL, "p2p.geforce", QUIET, 0, NULL },
	{ D("rdma-gid"), NULL, "rdma.gid", FIRE, GP_SEV_WARNING, "mlx5_0/1" },
	{ D("rdma-roce"), NULL, "rdma.gid", QUIET, 0, NULL },
	{ D("healthy"), NULL, "rdma.gid", FIRE, GP_SEV_SKIPPED, "mlx5_0/1" },          /* InfiniBand: not RoCE */
	{ D("rdma-gid-ll"), NULL, "rdma.gid", FIRE, GP_SEV_WARNING, "mlx5_0/1" },      /* v2 only for fe80:: */
	{ D("rdma-roce-ip"), NULL, "rdma.gid", QUIET, 0, NULL },                      /* and for an IPv4 address */
	{ D("rdma-rxe"), NULL, "rdma.gid", QUIET, 0, NULL },
	{ D("rdma-rxe-down"), NULL, "rdma.gid", FIRE, GP_SEV_WARNING, "rxe0/1" },      /* no IP: link-local only */
	{ D("rdma-rxe"), NULL, "rdma.port", QUIET, 0, NULL },
	{ D("rdma-rxe-down"), NULL, "rdma.port", FIRE, GP_SEV_INFO, "rxe0/1" },        /* software RDMA: no error */
	{ D("rdma-rxe"), NULL, "rdma.rate", QUIET, 0, NULL },                         /* 2.5 "Gb/s" on Gen1 x1 */
	{ D("rdma-rxe"), NULL, "rdma.rate", FIRE, GP_SEV_SKIPPED, "rxe0/1" },
	{ D("rdma-rxe"), NULL, "rdma.uverbs", QUIET, 0, NULL },
	{ D("rdma-rate"), NULL, "rdma.rate", FIRE, GP_SEV_WARNING, "mlx5_0/1" },       /* 400G on Gen4 x16 */
	{ D("healthy"), NULL, "rdma.rate", QUIET, 0, NULL },                          /* 400G on Gen5 x16 */
	{ D("rdma-uverbs"), NULL, "rdma.uverbs", FIRE, GP_SEV_ERROR, "ib_uverbs" },
	{ D("rdma-uverbs-node"), NULL, "rdma.uverbs", FIRE, GP_SEV_ERROR, "mlx5_3" },
	{ D("healthy"), NULL, "rdma.uverbs", QUIET, 0, NULL },
	{ "dgx-h100", NULL, "rdma.uverbs", FIRE, GP_SEV_SKIPPED, "ib_uverbs" },       /* no /proc/modules */
	{ D("healthy"), verbs_missing, "rdma.verbs_lib", FIRE, GP_SEV_WARNING, "libibverbs" },
	{ D("healthy"), verbs_no_mlx5_7, "rdma.verbs_lib", FIRE, GP_SEV_WARNING, "mlx5_7" },
	{ D("healthy"), verbs_all, "rdma.verbs_lib", QUIET, 0, NULL },
	{ D("healthy"), NULL, "rdma.verbs_lib", FIRE, GP_SEV_SKIPPED, NULL },         /* offline */
	{ D("healthy"), NULL, "rdma.gdr", QUIET, 0, NULL },                 /* peermem; far pairs: GPUs have a near one */
	{ D("healthy"), verbs_all, "rdma.gdr", QUIET, 0, NULL },            /* dma-buf and peermem */
	{ D("pm-dmabuf"), verbs_all, "rdma.gdr", QUIET, 0, NULL },          /* dma-buf only */
	{ D("rdma-rxe"), NULL, "rdma.gdr", QUIET, 0, NULL },                /* rxe0, but mlx5_1 on the switch too */
	{ D("gdr-read"), verbs_all, "rdma.gdr", QUIET, 0, NULL },           /* compute 9.0: reads on */
	{ D("pm-missing"), NULL, "rdma.gdr", FIRE, GP_SEV_INFO, "0000:13:00.0-mlx5_0" },  /* neither path */
	{ D("gdr-sys"), NULL, "rdma.gdr", QUIET, 0, NULL },                 /* closest NIC SYS, but PXN via NVLink */
	{ D("gdr-far"), NULL, "rdma.gdr", FIRE, GP_SEV_INFO, "0000:13:00.0-mlx5_4" },     /* closest SYS, no NVLink */
	{ D("gdr-rxe"), NULL, "rdma.gdr", FIRE, GP_SEV_INFO, "0000:13:00.0-rxe0" },       /* software RDMA only */
	{ D("gdr-read"), gdr_cc70, "rdma.gdr", FIRE, GP_SEV_INFO, "0000:13:00.0-mlx5_0" }, /* 7.0, no NVLink */
	{ D("healthy"), gdr_nogpu, "rdma.gdr", FIRE, GP_SEV_WARNING, "0000:13:00.0-mlx5_0" },
	{ D("healthy"), gdr_nogpu, "rdma.gdr", FIRE, GP_SEV_OK, "0000:13:00.0-mlx5_1" },   /* one alarm per GPU */
	{ D("pm-dmabuf"), NULL, "rdma.gdr", FIRE, GP_SEV_SKIPPED, "0000:13:00.0-mlx5_0" }, /* offline: not probed */
	{ D("pm-dmabuf"), dmabuf_no_cuda, "rdma.gdr", FIRE, GP_SEV_UNKNOWN, "0000:13:00.0-mlx5_0" },
	{ D("pm-dmabuf"), dmabuf_no_cuda, "rdma.gdr", FIRE, GP_SEV_SKIPPED, "0000:13:00.0-mlx5_1" }, /* counted once */
	{ "workstation", NULL, "rdma.gdr", FIRE, GP_SEV_SKIPPED, "system" },             /* no RDMA NIC */
	/* nic */
	{ D("nic-driver"), NULL, "nic.driver", FIRE, GP_SEV_WARNING, "0000:16:00.0" },
	{ D("healthy"), NULL, "nic.driver", QUIET, 0, NULL },
	{ "workstation", NULL, "nic.driver", FIRE, GP_SEV_SKIPPED, NULL },
	/* kmod */
	{ D("healthy"), NULL, "kmod.loaded", FIRE, GP_SEV_INFO, "gpup2p" },
	{ D("kmod-version"), NULL, "kmod.loaded", FIRE, GP_SEV_WARNING, "gpup2p" },
	{ D("kmod-loaded"), NULL, "kmod.loaded", QUIET, 0, NULL },
	{ D("kmod-version"), NULL, "kmod.node", FIRE, GP_SEV_WARNING, "/dev/gpup2p" },
	{ D("kmod-loaded"), NULL, "kmod.node", QUIET, 0, NULL },
	{ D("healthy"), NULL, "kmod.node", FIRE, GP_SEV_SKIPPED, NULL },
	{ D("kmod-noapi"), NULL, "kmod.nv_p2p_api", FIRE, GP_SEV_WARNING, "nvidia" },
	{ D("healthy"), NULL, "kmod.nv_p2p_api", QUIET, 0, NULL },
	{ D("kmod-disabled"), NULL, "kmod.loadable", FIRE, GP_SEV_INFO, "kernel" },
	{ D("healthy"), NULL, "kmod.loadable", QUIET, 0, NULL },
	/* limits: live only */
	{ D("healthy"), memlock_64k, "limits.memlock", FIRE, GP_SEV_WARNING, "RLIMIT_MEMLOCK" },
	{ D("healthy"), live, "limits.memlock", QUIET, 0, NULL },
	{ D("healthy"), NULL, "limits.memlock", FIRE, GP_SEV_SKIPPED, NULL },       /* offline */
	{ "workstation", memlock_64k, "limits.memlock", FIRE, GP_SEV_SKIPPED, NULL }, /* no RDMA NIC */
	{ D("healthy"), shm_64m, "limits.shm", FIRE, GP_SEV_WARNING, "/dev/shm" },
	{ D("healthy"), live, "limits.shm", QUIET, 0, NULL },
	{ D("healthy"), expect_more, "expect.gpu_count", FIRE, GP_SEV_ERROR, "system" },       /* 8, expected 9 */
	{ D("healthy"), expect_same, "expect.gpu_count", QUIET, 0, NULL },
	{ D("healthy"), NULL, "expect.gpu_count", FIRE, GP_SEV_SKIPPED, NULL },               /* no --expect */
	{ D("healthy"), expect_more, "expect.gpu_model", FIRE, GP_SEV_ERROR, "0000:13:00.0" },
	{ D("healthy"), expect_same, "expect.gpu_model", QUIET, 0, NULL },
	{ D("healthy"), expect_more, "expect.gpu_link", FIRE, GP_SEV_ERROR, "0000:b4:00.0" },  /* gen5, expected 6 */
	{ D("healthy"), expect_same, "expect.gpu_link", QUIET, 0, NULL },
	{ D("healthy"), expect_more, "expect.nvlinks", FIRE, GP_SEV_ERROR, "0000:13:00.0" },   /* its own line: 19 */
	{ D("healthy"), expect_same, "expect.nvlinks", QUIET, 0, NULL },
	{ D("healthy"), expect_more, "expect.gpu_numa", FIRE, GP_SEV_ERROR, "0000:13:00.0" },  /* node 0, expected 1 */
	{ D("healthy"), expect_same, "expect.gpu_numa", QUIET, 0, NULL },
	{ D("healthy"), expect_more, "expect.nic_count", FIRE, GP_SEV_ERROR, "0000:ff:00.0" }, /* named, not there */
	{ D("healthy"), expect_same, "expect.nic_count", QUIET, 0, NULL },
	{ D("healthy"), expect_more, "expect.nic_rate", FIRE, GP_SEV_ERROR, "0000:15:00.0" },
	{ D("healthy"), expect_same, "expect.nic_rate", QUIET, 0, NULL },
	{ D("healthy"), expect_more, "expect.nic_link", FIRE, GP_SEV_ERROR, "0000:16:00.0" },  /* x16, expected x32 */
	{ D("healthy"), expect_same, "expect.nic_link", QUIET, 0, NULL },
	{ D("healthy"), expect_more, "expect.nic_numa", FIRE, GP_SEV_ERROR, "0000:15:00.0" },
	{ D("healthy"), expect_same, "expect.nic_numa", QUIET, 0, NULL },
};
#define NCASES (int)(sizeof(cases) / sizeof(cases[0]))

/* One case. FIRE: a finding of the check with the severity (and subject) asked for. QUIET: at least one
 * "ok" and no error, warning, info or unknown (skipped subjects are allowed). */
static void check_case(const struct dcase *k)
{
	static struct fx x;
	struct gp_doctor_ctx c;
	int n = 0, match = 0, ok = 0, alarm = 0;

	if (run_sel(k->fixture, k->setup, k->id, NULL, &x, &c)) {
		CHECK(0, "%s: fixture %s loads", k->id, k->fixture);
		return;
	}
	for (int i = 0; i < c.out.n; i++) {
		const struct gp_finding *f = &c.out.v[i];

		if (strcmp(f->check->id, k->id))
			continue;
		n++;
		ok += f->sev == GP_SEV_OK;
		alarm += f->sev <= GP_SEV_INFO || f->sev == GP_SEV_UNKNOWN;
		match += f->sev == k->sev && (!k->subject || !strcmp(f->subject, k->subject));
	}
	if (k->kind == QUIET)
		CHECK(ok > 0 && !alarm, "%s stays quiet on %s%s (%d findings: %d ok, %d error/warning/info/unknown)",
		      k->id, k->fixture, k->setup ? " (set up)" : "", n, ok, alarm);
	else
		CHECK(match > 0, "%s says %s on %s%s about %s", k->id, gp_sev_name(k->sev), k->fixture,
		      k->setup ? " (set up)" : "", k->subject ? k->subject : "something");
	done(&x, &c);
}

/* Checks whose alarm is "unknown" by the spec (doctor-checks.md): they report what could not be read. */
static int alarms_unknown(const char *id)
{
	return !strcmp(id, "acs.unreadable");
}

/* The registry walk: every id has a firing case (error, warning or info; unknown for the checks above)
 * and a quiet one. */
static void registry_walk(void)
{
	for (int i = 0; i < gp_doctor_count(); i++) {
		const struct gp_doctor_check *k = gp_doctor_at(i);
		int fire = 0, quiet = 0;

		for (int j = 0; j < NCASES; j++) {
			if (strcmp(cases[j].id, k->id))
				continue;
			quiet += cases[j].kind == QUIET;
			fire += cases[j].kind == FIRE && (cases[j].sev <= GP_SEV_INFO ||
							  (cases[j].sev == GP_SEV_UNKNOWN && alarms_unknown(k->id)));
		}
		CHECK(fire && quiet, "%s has a fixture that fires it (%d) and one that stays quiet (%d)", k->id, fire, quiet);
		CHECK(k->title && k->explain && strchr(k->id, '.') && gp_doctor_family(k->id) &&
		      gp_doctor_find(k->id) == k, "%s: title, explain text, family", k->id);
	}
	for (int j = 0; j < NCASES; j++)
		if (!gp_doctor_find(cases[j].id))
			CHECK(0, "case %d names an unknown check %s", j, cases[j].id);
}

int main(void)
{
	registry_walk();
	for (int i = 0; i < NCASES; i++)
		check_case(&cases[i]);
	return unit_done();
}
